import { Schema } from "effect"
import { ApprovalVia } from "./ApprovalVia.js"
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

export const FinishReason = Schema.Literal("stop", "tool_call", "length", "other")
export type FinishReason = typeof FinishReason.Type

/** An LLM attempt that failed before the answer (a retry, or a failover to the next provider). */
export const FailedAttempt = Schema.Struct({
  provider: Schema.String,
  reason: Schema.String,
  message: Schema.String
})
export type FailedAttempt = typeof FailedAttempt.Type

/** One LLM call. `tool_call` is the first of `tool_calls`, kept for the seed's shape. */
export const ThoughtStep = Schema.Struct({
  kind: Schema.Literal("thought"),
  model: Schema.String,
  /** The provider that answered, e.g. `openai:gpt-4o`; `model` is what it reported. */
  provider: Schema.String,
  tier: Tier,
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
  failed_attempts: Schema.Array(FailedAttempt)
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
  metadata: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})
export type ExecutionTrace = typeof ExecutionTrace.Type
export type ExecutionTraceJson = typeof ExecutionTrace.Encoded

export const encodeTrace = Schema.encodeSync(ExecutionTrace)
export const decodeTrace = Schema.decodeUnknown(ExecutionTrace, { errors: "all", onExcessProperty: "error" })
export const traceToJson = (trace: ExecutionTrace): string => JSON.stringify(encodeTrace(trace))
