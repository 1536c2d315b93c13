import { Cause, Effect } from "effect"

/** What a wait started by `waitCleanedUp` returns: the clean-up for a caller who stops waiting, if any. */
export type CleanUp = (() => void) | undefined

/**
 * A wait for a callback with a clean-up for when the caller stops waiting (is interrupted): what `Effect.async`
 * does when its registration returns a canceler. `start` begins the wait and returns the clean-up, which runs,
 * uninterruptibly, only if the wait is interrupted (an interruption that comes before the wait begins has nothing
 * to clean up). `start` must not throw.
 *
 * Not `Effect.async` with a canceler: Effect wraps such a wait in `onInterrupt`, and V8 soon allocates some of
 * that wrapper's objects straight into the old generation (allocation-site pretenuring). Dead as soon as the wait
 * ends, they still hold what the wait holds (the caller's fiber, and so its whole conversation) through every
 * young-generation collection until the next full one, each of which copies it and promotes it.
 */
export const waitCleanedUp = <A, E>(
  start: (resume: (effect: Effect.Effect<A, E>) => void) => CleanUp
): Effect.Effect<A, E> =>
  Effect.uninterruptibleMask((restore) => {
    let cleanUp: CleanUp
    return Effect.catchAllCause(
      restore(Effect.async<A, E>((resume) => {
        cleanUp = start(resume)
      })),
      (cause) => {
        if (Cause.isInterrupted(cause)) cleanUp?.()
        return Effect.failCause(cause)
      }
    )
  })
