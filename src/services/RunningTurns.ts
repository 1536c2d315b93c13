import { Context } from "effect"
import type { Effect } from "effect"

/** The turns running in this process, by session: what `/stop` interrupts. */
export class RunningTurns extends Context.Tag("myclaw/RunningTurns")<RunningTurns, {
  /**
   * Marks the calling fiber as running a turn of the session; `leave`, called by the same fiber, unmarks it. The
   * turn calls both in its own uninterruptible region, so that the second runs however the turn ends. (Nothing is
   * handed from one to the other: an open conversation would hold it for the whole turn.)
   */
  readonly enter: (sessionId: string) => Effect.Effect<void>
  readonly leave: (sessionId: string) => Effect.Effect<void>
  /** Interrupts the session's running turns but the caller's, waits for them to close: how many there were. */
  readonly stop: (sessionId: string) => Effect.Effect<number>
  /** How many turns run now, in every session. */
  readonly count: Effect.Effect<number>
}>() {}
