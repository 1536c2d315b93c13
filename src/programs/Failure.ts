import { Cause, Chunk } from "effect"

/** What a cause is to a handler of expected failures: the first of them, or the cause to fail with otherwise. */
export type Failure<E> =
  | { readonly _tag: "Expected"; readonly error: E }
  | { readonly _tag: "Unexpected"; readonly cause: Cause.Cause<never> }

/**
 * The cause as `Effect.matchEffect` hands it on: a cause with a defect fails again with its failures made defects
 * too; otherwise its first failure goes to the handler, and a cause without one (an interruption) fails again as it
 * is. For a `matchCauseEffect` on a hot path: `matchEffect` wraps its handlers in one more closure and keeps them in
 * an object of their own, which the frame of every fiber parked under it holds.
 */
export const failureOf = <E>(cause: Cause.Cause<E>): Failure<E> => {
  if (Cause.isDie(cause)) return { _tag: "Unexpected", cause: Cause.match(cause, electing) }
  const failures = Cause.failures(cause)
  return Chunk.isNonEmpty(failures)
    ? { _tag: "Expected", error: Chunk.headNonEmpty(failures) }
    : { _tag: "Unexpected", cause: cause as Cause.Cause<never> }
}

/** The same cause, each failure a defect. */
const electing: Parameters<typeof Cause.match<Cause.Cause<never>, unknown>>[1] = {
  onEmpty: Cause.empty,
  onFail: Cause.die,
  onDie: Cause.die,
  onInterrupt: Cause.interrupt,
  onSequential: Cause.sequential,
  onParallel: Cause.parallel
}
