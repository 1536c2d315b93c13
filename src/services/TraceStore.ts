import { Context, DateTime } from "effect"
import type { Effect } from "effect"
import type { TraceStoreError } from "../domain/Errors.js"
import type { ExecutionTrace } from "../domain/ExecutionTrace.js"

export interface PastTurn {
  readonly userMessage: string
  readonly finalResponse: string | null
  /** The untrusted sources that tainted the turn (its own and those it inherited), when there were any. */
  readonly taintedBy?: ReadonlyArray<string>
  /** When a tainted turn answered (ISO 8601). */
  readonly answeredAt?: string
}

/** What a closed turn leaves for the prompts of the session's next turns. */
export const pastTurnOf = (trace: ExecutionTrace): PastTurn => {
  const sources = trace.metadata.taint_sources
  const taintedBy = Array.isArray(sources) ? sources.filter((s): s is string => typeof s === "string") : []
  return {
    userMessage: trace.user_message,
    finalResponse: trace.final_response,
    ...(taintedBy.length > 0 ? { taintedBy } : {}),
    ...(taintedBy.length > 0 && trace.finished_at !== null ? { answeredAt: DateTime.formatIso(trace.finished_at) } : {})
  }
}

/** Where closed traces are kept, whole and replayable. */
export class TraceStore extends Context.Tag("myclaw/TraceStore")<TraceStore, {
  /** Durable when it succeeds. */
  readonly persist: (trace: ExecutionTrace) => Effect.Effect<void, TraceStoreError>
  /**
   * The last `limit` closed turns of a session, oldest first (in the order they were persisted), none for a
   * limit below 1: what the prompt's history block needs. A store keeps at least the last 20 of each session.
   */
  readonly recentTurns: (sessionId: string, limit: number) => Effect.Effect<ReadonlyArray<PastTurn>, TraceStoreError>
}>() {}
