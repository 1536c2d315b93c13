import { DateTime, Schema } from "effect"
import { ApprovalVia } from "./ApprovalVia.js"
import { onFirstCall } from "./OnFirstCall.js"
import { PolicyVerdict, ToolCall, ToolResult, Validation } from "./ToolCall.js"

/** The six ways a turn ends. */
export const Outcome = Schema.Literal(
  "success",
  "tool_hallucination",
  "policy_denied",
  "user_aborted",
  "budget_hit",
  "timeout_steps"
)
export type Outcome = typeof Outcome.Type
export const outcomes: ReadonlyArray<Outcome> = Outcome.literals

export const Tier = Schema.Literal("frontier", "local-fast")
export type Tier = typeof Tier.Type

/** Why a model stopped: as OpenTelemetry's GenAI conventions name it (`content_filter`: its provider stopped it). */
export const FinishReason = Schema.Literal("stop", "tool_call", "length", "content_filter", "other")
export type FinishReason = typeof FinishReason.Type

/** An LLM attempt that failed before the answer (a retry, or a failover to the next provider). */
export const FailedAttempt = Schema.Struct({
  provider: Schema.String,
  reason: Schema.String,
  message: Schema.String
})
export type FailedAttempt = typeof FailedAttempt.Type

/** A hash of each part of the request a Thought sent (timestamps and wrapper ids masked): what replay checks. */
export const RequestHash = Schema.Struct({
  system: Schema.String,
  messages: Schema.String,
  message_count: Schema.Number,
  tools: Schema.String
})
export type RequestHash = typeof RequestHash.Type

/** One LLM call. `tool_call` is the first of `tool_calls`, kept for the shape traces have always had. */
export const ThoughtStep = Schema.Struct({
  kind: Schema.Literal("thought"),
  model: Schema.String,
  /** The provider that answered, e.g. `openai:gpt-4o`; `model` is what it reported. */
  provider: Schema.String,
  /** The tier whose provider answered. */
  tier: Tier,
  /**
   * The tier the request asked for, when it is not the one that answered (a tier with no provider borrows the
   * other's); absent when they are the same, and in traces recorded before it was kept.
   */
  requested_tier: Schema.optional(Tier),
  prompt_tokens: Schema.Number,
  cached_tokens: Schema.Number,
  response_tokens: Schema.Number,
  finish_reason: FinishReason,
  text: Schema.String,
  tool_call: Schema.NullOr(ToolCall),
  tool_calls: Schema.Array(ToolCall),
  cost_usd: Schema.Number,
  wall_ms: Schema.Number,
  /** Attempts that failed before this answer: retries and failovers, in order. */
  failed_attempts: Schema.Array(FailedAttempt),
  /** The fingerprint of the request sent (absent in traces recorded before replay existed). */
  request_hash: Schema.optional(RequestHash),
  /** The whole request (tier, system, messages, tools), volatile parts masked; only with `traces.recordRequests`. */
  request: Schema.optional(Schema.Unknown)
})
export type ThoughtStep = typeof ThoughtStep.Type

export const ApprovalRecord = Schema.Struct({
  granted: Schema.Boolean,
  via: ApprovalVia,
  reason: Schema.String
})
export type ApprovalRecord = typeof ApprovalRecord.Type

/** One tool call after the Thought: validated, judged by the policy, maybe approved, maybe executed. */
export const ActionStep = Schema.Struct({
  kind: Schema.Literal("action"),
  tool_call_id: Schema.String,
  tool_name: Schema.String,
  args: Schema.Unknown,
  validation: Validation,
  /** The message sent back to the model when validation failed. */
  validation_error: Schema.NullOr(Schema.String),
  policy_decision: Schema.NullOr(PolicyVerdict),
  policy_reason: Schema.NullOr(Schema.String),
  approval: Schema.NullOr(ApprovalRecord),
  exec_result: Schema.NullOr(ToolResult),
  error: Schema.NullOr(Schema.String),
  wall_ms: Schema.Number
})
export type ActionStep = typeof ActionStep.Type

export const CriticStep = Schema.Struct({
  kind: Schema.Literal("critic"),
  purpose: Schema.Literal("fitness", "safety", "quality"),
  input: Schema.String,
  verdict: Schema.String,
  reason: Schema.String
})
export type CriticStep = typeof CriticStep.Type

export const TraceStep = Schema.Union(ThoughtStep, ActionStep, CriticStep)
export type TraceStep = typeof TraceStep.Type

/** The version of the trace format this runtime writes; traces without `format` are version 0 (not replayable). */
export const TRACE_FORMAT = 1

/** An id the turn drew from the IdGenerator, in order. */
export const DrawnId = Schema.Struct({
  kind: Schema.Literal("trace", "wrapper", "approval", "reservation", "session"),
  id: Schema.String
})
export type DrawnId = typeof DrawnId.Type

/** The day's budget as the turn read it (the level decides the tier, and whether the turn may call a model). */
export const BudgetRead = Schema.Struct({
  level: Schema.Literal("ok", "soft", "hard"),
  day: Schema.String,
  time_zone: Schema.String,
  spent_eur: Schema.Number,
  reserved_eur: Schema.Number,
  soft_cap_eur: Schema.Number,
  hard_cap_eur: Schema.Number,
  resets_at: Schema.Number,
  override_until: Schema.NullOr(Schema.Number),
  soft_notice_pending: Schema.Boolean
})
export type BudgetRead = typeof BudgetRead.Type

/** A past turn of the session as a replay gives it back. */
const RecordedTurn = Schema.Struct({
  user_message: Schema.String,
  final_response: Schema.NullOr(Schema.String),
  /** The untrusted sources that tainted that turn, and when it answered: its answer comes back wrapped. */
  tainted_by: Schema.optional(Schema.Array(Schema.String)),
  answered_at: Schema.optional(Schema.String)
})

/** A summary of the session's older turns, and the untrusted sources behind it. */
const RecordedSummary = Schema.Struct({ text: Schema.String, tainted_by: Schema.Array(Schema.String) })

/**
 * The session as the summary made on entering the turn read it, before it ran: the conversation's turns, each
 * with its number in the session (the summary request names them), and the previous summary; and, when the
 * summary call failed, its error (encoded as `metadata.error` encodes a failed Thought), since a failed call
 * leaves no step. A replay serves this history until the replayed summary is added, then the compacted one.
 */
export const CompactionRecord = Schema.Struct({
  turns: Schema.Array(Schema.Struct({ seq: Schema.Number, ...RecordedTurn.fields })),
  summary: Schema.optional(RecordedSummary),
  error: Schema.optional(Schema.Unknown)
})
export type CompactionRecord = typeof CompactionRecord.Type

/**
 * What a replay needs beyond the steps: the ids the turn drew, the session history its prompt held, each budget
 * status it read, in order, and what the summary of the session's older turns read, when the turn made one.
 */
export const ReplayRecord = Schema.Struct({
  ids: Schema.Array(DrawnId),
  history: Schema.Array(RecordedTurn),
  /** The summary of the session's older turns the prompt held. */
  summary: Schema.optional(RecordedSummary),
  budget: Schema.optional(Schema.Array(BudgetRead)),
  /** Absent when the turn made no summary of its session (and in traces recorded before it was kept). */
  compaction: Schema.optional(CompactionRecord)
})
export type ReplayRecord = typeof ReplayRecord.Type

/**
 * How a turn was served, cheapest first: a deterministic rule, a cached plan (fast), a generalised plan (auto),
 * or the model's ReAct loop. Traces written before paths existed have none: they were `react`.
 */
export const TurnPath = Schema.Literal("rule", "fast", "auto", "react")
export type TurnPath = typeof TurnPath.Type

/** The single source of truth of a turn. */
export const ExecutionTrace = Schema.Struct({
  trace_id: Schema.String,
  session_id: Schema.String,
  channel: Schema.String,
  started_at: Schema.DateTimeUtc,
  finished_at: Schema.NullOr(Schema.DateTimeUtc),
  user_message: Schema.String,
  steps: Schema.Array(TraceStep),
  final_response: Schema.NullOr(Schema.String),
  cost_usd: Schema.Number,
  wall_time_ms: Schema.Number,
  outcome: Outcome,
  metadata: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  /** The trace format version (TRACE_FORMAT); absent in traces written before it existed. */
  format: Schema.optional(Schema.Number),
  replay: Schema.optional(ReplayRecord),
  /** The path that served the turn (absent: `react`). */
  path: Schema.optional(TurnPath),
  /** Why a cheaper path was not taken (or, for a cheaper path, what it used). */
  path_reason: Schema.optional(Schema.String)
})
export type ExecutionTrace = typeof ExecutionTrace.Type
export type ExecutionTraceJson = typeof ExecutionTrace.Encoded

/** The path of a trace; one written before paths existed was served by the ReAct loop. */
export const pathOf = (trace: ExecutionTrace): TurnPath => trace.path ?? "react"

export const encodeTrace = onFirstCall(() => Schema.encodeSync(ExecutionTrace))
export const decodeTrace = onFirstCall(() =>
  Schema.decodeUnknown(ExecutionTrace, { errors: "all", onExcessProperty: "error" })
)
/**
 * The trace as one JSON line. Its only fields whose encoded form differs from the value are the two times, so
 * the line is the trace with those two as ISO strings: the same JSON `encodeTrace` gives (a test holds the two
 * equal, and reading a line back rejects any field the schema does not know), without walking every step
 * through the schema on each write.
 */
export const traceToJson = (trace: ExecutionTrace): string =>
  JSON.stringify({
    ...trace,
    started_at: DateTime.formatIso(trace.started_at),
    finished_at: trace.finished_at === null ? null : DateTime.formatIso(trace.finished_at)
  })
