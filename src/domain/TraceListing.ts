import { DateTime, Schema } from "effect"
import { ExecutionTrace, Outcome } from "./ExecutionTrace.js"
import { truncateEnd } from "./Text.js"

/** One trace as a list shows it, and where its line is: what the trace index keeps per trace. */
export const TraceListing = Schema.Struct({
  trace_id: Schema.String,
  session_id: Schema.String,
  channel: Schema.String,
  /** ISO 8601 UTC. */
  started_at: Schema.String,
  outcome: Outcome,
  /** The user message, cut to 80 characters. */
  user_message: Schema.String,
  cost_usd: Schema.Number,
  wall_time_ms: Schema.Number,
  steps: Schema.Number,
  /** The monthly file (`YYYY-MM.jsonl`), the byte offset and the byte length of the trace's line. */
  file: Schema.String,
  offset: Schema.Number,
  length: Schema.Number
})
export type TraceListing = typeof TraceListing.Type

/** Which traces a list shows: of one session, started at or after an instant (epoch milliseconds). */
export interface TraceFilter {
  readonly sessionId?: string | undefined
  readonly since?: number | undefined
  readonly limit?: number | undefined
}

export const matchesFilter = (listing: TraceListing, filter: TraceFilter): boolean =>
  (filter.sessionId === undefined || listing.session_id === filter.sessionId) &&
  (filter.since === undefined || Date.parse(listing.started_at) >= filter.since)

/**
 * The fields of a trace a listing is made of, its steps only counted: what indexing decodes of a trace's line (the
 * rest of the line is decoded when the trace is read).
 */
export const ListedFields = Schema.Struct({
  trace_id: ExecutionTrace.fields.trace_id,
  session_id: ExecutionTrace.fields.session_id,
  channel: ExecutionTrace.fields.channel,
  started_at: ExecutionTrace.fields.started_at,
  outcome: ExecutionTrace.fields.outcome,
  user_message: ExecutionTrace.fields.user_message,
  cost_usd: ExecutionTrace.fields.cost_usd,
  wall_time_ms: ExecutionTrace.fields.wall_time_ms,
  steps: Schema.Array(Schema.Unknown)
})
export type ListedFields = typeof ListedFields.Type

/** The listing of a trace whose line is `length` bytes at `offset` of `file`. */
export const listingOf = (trace: ListedFields, file: string, offset: number, length: number): TraceListing => ({
  trace_id: trace.trace_id,
  session_id: trace.session_id,
  channel: trace.channel,
  started_at: DateTime.formatIso(trace.started_at),
  outcome: trace.outcome,
  user_message: truncateEnd(trace.user_message, 80),
  cost_usd: trace.cost_usd,
  wall_time_ms: trace.wall_time_ms,
  steps: trace.steps.length,
  file,
  offset,
  length
})
