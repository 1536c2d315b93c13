import { Schema } from "effect"

/**
 * A tool call as the model produced it. `args` is the decoded JSON value; when the model sent
 * arguments that are not valid JSON, `args` is null and `raw_arguments` keeps the text so that
 * the validator can report it.
 */
export const ToolCall = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  args: Schema.Unknown,
  raw_arguments: Schema.optional(Schema.String)
})
export type ToolCall = typeof ToolCall.Type

/** A call as it arrives on the wire: `args` as a JSON string stays invalid (for the validator) when it does not parse. */
export const toolCallFromWire = (id: string, name: string, args: unknown): ToolCall => {
  if (typeof args !== "string") return { id, name, args }
  try {
    return { id, name, args: JSON.parse(args) }
  } catch {
    return { id, name, args: null, raw_arguments: args }
  }
}

/** success / empty / partial / failed: a failed side-effecting call is never blindly retried. */
export const ToolResultStatus = Schema.Literal("success", "empty", "partial", "failed")
export type ToolResultStatus = typeof ToolResultStatus.Type

/** Where a large result's whole content is kept, once, outside the trace line: `blobs/<sha256>`. */
export const ContentAside = Schema.Struct({
  sha256: Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/)),
  bytes: Schema.Number.pipe(Schema.int(), Schema.nonNegative())
})
export type ContentAside = typeof ContentAside.Type

/**
 * The full result of one tool execution, as kept in the trace. A large content is stored aside by its hash
 * (`aside`), and the line keeps only its beginning: reading the trace back restores it whole.
 */
export const ToolResult = Schema.Struct({
  status: ToolResultStatus,
  content: Schema.String,
  /** Where the content came from when it is external (untrusted), e.g. `file:notes/todo.md`. */
  source: Schema.optional(Schema.String),
  /** Why a `partial` result is incomplete. */
  note: Schema.optional(Schema.String),
  aside: Schema.optional(ContentAside)
})
export type ToolResult = typeof ToolResult.Type

export const Validation = Schema.Literal("ok", "schema_error", "unknown_tool")
export type Validation = typeof Validation.Type

export const PolicyVerdict = Schema.Literal("allow", "deny", "approve_required")
export type PolicyVerdict = typeof PolicyVerdict.Type
