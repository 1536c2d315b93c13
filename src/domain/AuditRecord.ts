import { Schema } from "effect"
import { ApprovalRecordVia } from "./ApprovalVia.js"
import { exactCheck } from "./ExactCheck.js"
import { Outcome } from "./ExecutionTrace.js"
import { onFirstCall } from "./OnFirstCall.js"

/**
 * Audit records: one JSON line each, validated by kind. Every record
 * has `kind` and `at` (ISO 8601 UTC); the audit log adds `seq`, `prev` and `sig` when it appends.
 */
const At = Schema.String.pipe(Schema.pattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/, {
  message: () => "expected an ISO 8601 UTC timestamp such as 2026-04-22T14:03:22.000Z"
}))
const NullableString = Schema.NullOr(Schema.String)

/** The summary of a closed trace; the whole replayable trace is in the trace store. */
export const TraceRecord = Schema.Struct({
  kind: Schema.Literal("trace"),
  at: At,
  trace_id: Schema.String,
  session_id: Schema.String,
  channel: Schema.String,
  sender: Schema.String,
  started_at: At,
  finished_at: At,
  user_message: Schema.String,
  final_response: NullableString,
  steps_count: Schema.Number,
  tool_calls: Schema.Array(Schema.Struct({
    name: Schema.String,
    args_summary: Schema.String,
    outcome: Schema.String
  })),
  cost_usd: Schema.Number,
  wall_time_ms: Schema.Number,
  outcome: Outcome,
  approvals_requested: Schema.Number,
  approvals_granted: Schema.Number
})

/** A request for approval, a verdict on it, or an answer that was refused (stale, replayed, foreign, late). */
export const ApprovalRecord = Schema.Struct({
  kind: Schema.Literal("approval"),
  at: At,
  event: Schema.Literal("requested", "verdict", "answer_rejected", "batch_use"),
  request_id: Schema.String,
  trace_id: Schema.String,
  session_id: Schema.String,
  sender: Schema.String,
  tool_name: Schema.String,
  effect_class: Schema.String,
  args_hash: Schema.String,
  granted: Schema.NullOr(Schema.Boolean),
  via: ApprovalRecordVia,
  reason: Schema.optional(Schema.String),
  batch_window_expires_at: Schema.optional(NullableString)
})

/** Write-ahead: the decision on a side-effecting call, durable before the call runs. */
export const ToolDecisionRecord = Schema.Struct({
  kind: Schema.Literal("tool_decision"),
  at: At,
  trace_id: Schema.String,
  session_id: Schema.String,
  sender: Schema.String,
  tool_name: Schema.String,
  target: Schema.String,
  args_hash: Schema.String,
  decision: Schema.Literal("allow", "deny", "approve_required"),
  rule: Schema.String,
  approval_request_id: NullableString
})

export const WorkspaceEditRecord = Schema.Struct({
  kind: Schema.Literal("workspace_edit"),
  at: At,
  file: Schema.String,
  author: Schema.Literal("agent", "manual"),
  trace_id: NullableString,
  size_before: Schema.Number,
  size_after: Schema.Number,
  diff_stat: Schema.String,
  approved_by_request_id: NullableString
})

export const ConstitutionModifiedRecord = Schema.Struct({
  kind: Schema.Literal("constitution_modified"),
  at: At,
  hash_before: Schema.String,
  hash_after: Schema.String,
  diff: Schema.String,
  notes: Schema.optional(Schema.String)
})

export const BudgetOverrideRecord = Schema.Struct({
  kind: Schema.Literal("budget_override"),
  at: At,
  sender: Schema.String,
  until: At,
  reason: Schema.String
})

export const InjectionSuspectedRecord = Schema.Struct({
  kind: Schema.Literal("injection_suspected"),
  at: At,
  trace_id: Schema.String,
  session_id: Schema.String,
  sender: Schema.String,
  source: Schema.String,
  pattern: Schema.String,
  excerpt: Schema.String
})

/** Written at start after a torn last line (a crash mid-write) was cut off. */
export const RecoveredRecord = Schema.Struct({
  kind: Schema.Literal("recovered"),
  at: At,
  file: Schema.String,
  truncated_bytes: Schema.Number,
  detail: Schema.String
})

/**
 * The log continued after its key was lost (a workspace restored from a backup): the current key was derived
 * again from the owner's verification seed, after the whole log verified against it.
 */
export const AuditResumedRecord = Schema.Struct({
  kind: Schema.Literal("audit_resumed"),
  at: At,
  sender: Schema.String,
  seed_epoch: Schema.Number,
  key_epoch: Schema.Number,
  records_verified: Schema.Number,
  notes: Schema.String
})

/**
 * A paid LLM call made outside a turn (a turn's calls are in its trace record, with their cost): what it was
 * for, the model and what it cost, so the day's spend can be rebuilt from the log alone.
 */
export const LlmCallRecord = Schema.Struct({
  kind: Schema.Literal("llm_call"),
  at: At,
  purpose: Schema.String,
  provider: Schema.String,
  model: Schema.String,
  tier: Schema.String,
  input_tokens: Schema.Number,
  output_tokens: Schema.Number,
  cost_usd: Schema.Number
})

/** The owner deleted a session's stored turns and summaries; its traces and audit records stay. */
export const SessionForgottenRecord = Schema.Struct({
  kind: Schema.Literal("session_forgotten"),
  at: At,
  sender: Schema.String,
  session_id: Schema.String,
  owner: Schema.String,
  turns_deleted: Schema.Number
})

/** The owner stored, replaced or removed a secret; the value is never recorded. */
export const SecretChangedRecord = Schema.Struct({
  kind: Schema.Literal("secret_changed"),
  at: At,
  sender: Schema.String,
  name: Schema.String,
  action: Schema.Literal("created", "updated", "removed")
})

export const AuditRecord = Schema.Union(
  TraceRecord,
  ApprovalRecord,
  ToolDecisionRecord,
  WorkspaceEditRecord,
  ConstitutionModifiedRecord,
  BudgetOverrideRecord,
  InjectionSuspectedRecord,
  RecoveredRecord,
  LlmCallRecord,
  AuditResumedRecord,
  SessionForgottenRecord,
  SecretChangedRecord
)
export type AuditRecord = typeof AuditRecord.Type
export type AuditKind = AuditRecord["kind"]
export type AuditRecordOf<K extends AuditKind> = Extract<AuditRecord, { readonly kind: K }>

/**
 * What the log adds to every record: its place in the file's hash chain and its signature. `epoch` (the UTC
 * day, counted from 1970-01-01, whose forward-secure key made `sig`) is written by the file log; the
 * in-memory log leaves it out.
 */
export const Sealed = Schema.Struct({
  seq: Schema.Number,
  prev: Schema.String,
  epoch: Schema.optional(Schema.Number),
  sig: Schema.String
})
export type Sealed = typeof Sealed.Type
export type SealedRecord = AuditRecord & Sealed

export const decodeAuditRecord = onFirstCall(() => Schema.decodeUnknownEither(AuditRecord, { errors: "all" }))

/**
 * Whether `decodeAuditRecord` would give this record back as it is: the log then appends the record itself, which
 * spares it a copy of every record it writes (see `ExactCheck`); otherwise it decodes.
 */
export const isExactAuditRecord = exactCheck(AuditRecord.ast)

// A record as the log stores it: the record's fields, in its schema's order, then the seal's.
const exactSealed = onFirstCall(() => exactCheck(Schema.extend(AuditRecord, Sealed).ast))

/**
 * Whether a stored line's JSON is a sealed record exactly as decoding would give it back: then it is the record,
 * and the decoding (tens of microseconds a record, most of what reading the log costs) is skipped. Every line
 * the log writes is one; anything else (a line of an older field order, with an undeclared field, invalid) is
 * decoded, for the record or for the error that names what is wrong.
 */
export const isExactSealedRecord = (json: unknown): json is SealedRecord => exactSealed(json)
