import { Schema } from "effect"

/** Why an LLM call failed; retry and failover decisions match on it, never on message text. */
export const LlmFailure = Schema.Literal(
  "Transport",
  "Timeout",
  "RateLimited",
  "Server",
  "Auth",
  "BadRequest",
  "BadResponse",
  "ContextTooLong",
  "NotConfigured"
)
export type LlmFailure = typeof LlmFailure.Type

export class LlmError extends Schema.TaggedError<LlmError>()("LlmError", {
  reason: LlmFailure,
  provider: Schema.String,
  message: Schema.String,
  /** The HTTP status, when there was a response. */
  status: Schema.optional(Schema.Number),
  /** How long the provider asked us to wait (retry-after), in milliseconds. */
  retryAfterMs: Schema.optional(Schema.Number),
  /** When every provider of a tier failed: each attempt, in order. */
  attempts: Schema.optional(Schema.Array(Schema.Struct({
    provider: Schema.String,
    reason: Schema.String,
    message: Schema.String
  })))
}) {}

export const llmTimeout = (provider: string, timeoutMs: number): LlmError =>
  new LlmError({ reason: "Timeout", provider, message: `no answer within ${timeoutMs} ms` })

const transient: ReadonlySet<LlmFailure> = new Set(["Transport", "Timeout", "RateLimited", "Server"])
export const isTransient = (error: LlmError): boolean => transient.has(error.reason)

/** What a caught error says, for a human message; the error itself goes in `cause`. */
export const messageOf = (error: unknown): string => error instanceof Error ? error.message : String(error)

/** The configuration file or the environment is invalid; the message names the field, `file` the file. */
export class ConfigFileError extends Schema.TaggedError<ConfigFileError>()("ConfigFileError", {
  file: Schema.String,
  reason: Schema.Literal("Unreadable", "InvalidJson", "Invalid", "NoProvider", "Environment"),
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}

/** A path given to a file tool resolves outside the workspace (`..`, absolute path or symlink). */
export class PathEscapeError extends Schema.TaggedError<PathEscapeError>()("PathEscapeError", {
  path: Schema.String,
  message: Schema.String
}) {}

/** A tool ran and failed; the message is written for the model. */
export class ToolExecutionError extends Schema.TaggedError<ToolExecutionError>()("ToolExecutionError", {
  tool: Schema.String,
  message: Schema.String
}) {}

/**
 * The workspace folder cannot be prepared or one of its files read; `NotWritable` when permission was denied,
 * `ConstitutionMissing` when SOUL.md is gone (no turn runs without it).
 */
export class WorkspaceError extends Schema.TaggedError<WorkspaceError>()("WorkspaceError", {
  path: Schema.String,
  reason: Schema.Literal("Io", "NotWritable", "ConstitutionMissing"),
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}

/** A trace could not be written or read (`Io`), or a line of a trace file is not a trace (`Corrupt`). */
export class TraceStoreError extends Schema.TaggedError<TraceStoreError>()("TraceStoreError", {
  path: Schema.String,
  reason: Schema.Literal("Io", "Corrupt"),
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}

/**
 * An audit append or read failed (disk full, I/O error, an invalid record): the action it records must not run.
 * `Misconfigured`: the key directory or the verification seed the owner gave cannot be used.
 */
export class AuditError extends Schema.TaggedError<AuditError>()("AuditError", {
  path: Schema.String,
  reason: Schema.Literal("InvalidRecord", "Closed", "Locked", "KeyMissing", "Misconfigured", "Io"),
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}

/** An LLM call would pass the daily hard cap: it is not made. */
export class BudgetExceeded extends Schema.TaggedError<BudgetExceeded>()("BudgetExceeded", {
  spentEur: Schema.Number,
  reservedEur: Schema.Number,
  callEur: Schema.Number,
  hardCapEur: Schema.Number,
  resetsAt: Schema.Number,
  /** The call refused: its model and the tokens its maximum was computed from. */
  model: Schema.optional(Schema.String),
  inputTokens: Schema.optional(Schema.Number),
  maxOutputTokens: Schema.optional(Schema.Number)
}) {}

/**
 * The budget's store cannot be read or written (`Io`: disk, lock held too long; `ReadOnly`: this process only
 * reads the budget). A call whose reservation cannot be stored is not made.
 */
export class BudgetStoreError extends Schema.TaggedError<BudgetStoreError>()("BudgetStoreError", {
  path: Schema.String,
  reason: Schema.Literal("Io", "ReadOnly"),
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}

/** The hard cap is not reached: only this call's maximum would pass it. */
export const callTooLarge = (error: BudgetExceeded): boolean => error.spentEur + error.reservedEur < error.hardCapEur

/** A refusal in words: what the call could cost, what remains, and the cap it would pass. */
export const budgetExceededMessage = (error: BudgetExceeded): string => {
  const used = error.spentEur + error.reservedEur
  const what = error.model === undefined
    ? ""
    : ` (${error.model}: a prompt of about ${error.inputTokens ?? 0} tokens and up to ${
      error.maxOutputTokens ?? 0
    } output tokens)`
  const held = error.reservedEur > 0 ? `, ${error.reservedEur.toFixed(4)} EUR held by calls in flight` : ""
  return `this call could cost up to ${error.callEur.toFixed(4)} EUR${what}, more than the ${
    Math.max(0, error.hardCapEur - used).toFixed(4)
  } EUR left of the ${error.hardCapEur.toFixed(2)} EUR hard cap (${error.spentEur.toFixed(4)} EUR spent today${held})`
}
