import { Context } from "effect"
import type { Effect, Option } from "effect"
import type { TraceStoreError } from "../domain/Errors.js"
import type { ExecutionTrace } from "../domain/ExecutionTrace.js"
import type { TraceFilter, TraceListing } from "../domain/TraceListing.js"

export interface PastTurn {
  readonly userMessage: string
  readonly finalResponse: string | null
  /** The untrusted sources that tainted the turn (its own and those it inherited), when there were any. */
  readonly taintedBy?: ReadonlyArray<string>
  /** When a tainted turn answered (ISO 8601). */
  readonly answeredAt?: string
}

/** The taint a trace records in its metadata, as the history of the session's next turns carries it. */
export const pastTaint = (
  metadata: unknown,
  answeredAt: string | undefined
): Pick<PastTurn, "taintedBy" | "answeredAt"> => {
  const sources = typeof metadata === "object" && metadata !== null
    ? (metadata as Record<string, unknown>).taint_sources
    : undefined
  const taintedBy = Array.isArray(sources) ? sources.filter((s): s is string => typeof s === "string") : []
  if (taintedBy.length === 0) return {}
  return answeredAt === undefined ? { taintedBy } : { taintedBy, answeredAt }
}

/** Where closed traces are kept, whole and replayable. */
export class TraceStore extends Context.Tag("myclaw/TraceStore")<TraceStore, {
  /** Durable when it succeeds. */
  readonly persist: (trace: ExecutionTrace) => Effect.Effect<void, TraceStoreError>
  /** One trace by id, without reading the others. */
  readonly get: (traceId: string) => Effect.Effect<Option.Option<ExecutionTrace>, TraceStoreError>
  /** The traces that match, in the order they were persisted (the last `limit` when given). */
  readonly list: (filter: TraceFilter) => Effect.Effect<ReadonlyArray<TraceListing>, TraceStoreError>
}>() {}
