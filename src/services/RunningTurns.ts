import { Context } from "effect"
import type { Effect } from "effect"

/** The turns running in this process, by session: what `/stop` interrupts. */
export class RunningTurns extends Context.Tag("myclaw/RunningTurns")<RunningTurns, {
  /** Runs a turn of the session, known as running until it ends. */
  readonly track: <A, E, R>(sessionId: string, turn: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Interrupts the session's running turns but the caller's, waits for them to close: how many there were. */
  readonly stop: (sessionId: string) => Effect.Effect<number>
  /** How many turns run now, in every session. */
  readonly count: Effect.Effect<number>
}>() {}
