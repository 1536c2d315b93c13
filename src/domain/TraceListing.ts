import { DateTime, Option, Schema } from "effect"
import { declaredCheck } from "./ExactCheck.js"
import { ExecutionTrace, Outcome } from "./ExecutionTrace.js"
import { onFirstCall } from "./OnFirstCall.js"
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

// A listing's fields as a trace's line holds them, before decoding: the start a string.
const plainFields = onFirstCall(() => declaredCheck(Schema.encodedSchema(ListedFields).ast))

/**
 * The listing of a trace line's JSON taken as it is, when its listing's fields are plainly there, as this runtime
 * writes every trace: a few microseconds where decoding them takes tens at start (every start lists the newest
 * traces, and an index is built from every trace of a month). Undefined otherwise: decode them, for the fields or
 * for what is wrong.
 */
export const plainListing = (
  json: unknown,
  file: string,
  offset: number,
  length: number
): TraceListing | undefined => {
  if (!plainFields(json)) return undefined
  const line = json as typeof ListedFields.Encoded
  // What decoding the start does: the instant `new Date` makes of the string, when it makes one.
  const startedAt = DateTime.make(line.started_at)
  if (Option.isNone(startedAt)) return undefined
  const fields: ListedFields = {
    trace_id: line.trace_id,
    session_id: line.session_id,
    channel: line.channel,
    started_at: DateTime.toUtc(startedAt.value),
    outcome: line.outcome,
    user_message: line.user_message,
    cost_usd: line.cost_usd,
    wall_time_ms: line.wall_time_ms,
    steps: line.steps
  }
  return listingOf(fields, file, offset, length)
}
