import { Effect } from "effect"

/** What an uninterruptible region hands its body: the caller's interruptibility, to give a part of it back. */
export type Restore = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/**
 * `Effect.uninterruptibleMask(open)`, holding less while the region is open. A region keeps the effect it
 * opened with until it closes: the mask keeps two effects, two closures and their contexts, and whatever
 * `open` closed over; here, the effect `open` makes, which can be an object of a few fields (an
 * `Effectable.Class` whose `commit` makes the body when it runs). `open` only makes that effect: it is called
 * as the region opens, with the interruptibility its caller had.
 */
export const uninterruptibleRegion = <A, E, R>(
  open: (restore: Restore) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.checkInterruptible((interruptible) =>
    Effect.uninterruptible(open(interruptible ? Effect.interruptible : Effect.uninterruptible))
  )
