import { Effect } from "effect"

interface Waiter {
  /** Its turn came: the key is its to use (or to pass on, when it was interrupted meanwhile). */
  granted: boolean
  resume: (() => void) | undefined
}

/**
 * Work run one at a time per key, in the order it arrives (first come, first served), and the work of different
 * keys side by side. Work that is interrupted while it waits leaves its place; a key nothing runs for holds nothing.
 */
export const makeOneAtATime = () => {
  // A key is here while work of it runs; its array is the work waiting, oldest first.
  const queues = new Map<string, Array<Waiter>>()

  const pass = (key: string) => {
    const queue = queues.get(key)
    if (queue === undefined) return
    const next = queue.shift()
    if (next === undefined) {
      queues.delete(key)
      return
    }
    next.granted = true
    next.resume?.()
  }

  const enter = (key: string, onWait: (ahead: number) => Effect.Effect<void>): Effect.Effect<void> =>
    Effect.suspend(() => {
      const queue = queues.get(key)
      if (queue === undefined) {
        queues.set(key, [])
        return Effect.void
      }
      const waiter: Waiter = { granted: false, resume: undefined }
      queue.push(waiter)
      const ahead = queue.length
      return onWait(ahead).pipe(
        Effect.zipRight(Effect.async<void>((resume) => {
          if (waiter.granted) resume(Effect.void)
          else waiter.resume = () => resume(Effect.void)
        })),
        Effect.onInterrupt(() =>
          Effect.sync(() => {
            if (waiter.granted) pass(key)
            else queue.splice(queue.indexOf(waiter), 1)
          })
        )
      )
    })

  return {
    /**
     * Runs `work` once the work of `key` that came before it has ended; `onWait` is told, when it has to wait, how
     * many run or wait ahead of it.
     */
    run: <A, E, R>(
      key: string,
      work: Effect.Effect<A, E, R>,
      onWait: (ahead: number) => Effect.Effect<void> = () => Effect.void
    ): Effect.Effect<A, E, R> =>
      Effect.acquireUseRelease(
        Effect.interruptible(enter(key, onWait)),
        () => work,
        () => Effect.sync(() => pass(key))
      ),
    /** How many keys have work running (for tests: nothing is kept for a key once its work has ended). */
    get busy(): number {
      return queues.size
    }
  }
}
