import { Context } from "effect"
import type { Effect } from "effect"
import type { LlmToolSpec } from "../domain/LlmTypes.js"
import type { PreparedCall, Tool } from "../domain/Tool.js"
import type { ToolCall, ToolResult } from "../domain/ToolCall.js"

export type Validated =
  | { readonly _tag: "Valid"; readonly call: ToolCall; readonly tool: Tool; readonly prepared: PreparedCall }
  | {
    readonly _tag: "Invalid"
    readonly call: ToolCall
    readonly validation: "unknown_tool" | "schema_error"
    /** The `tool_error` message for the model. */
    readonly message: string
  }

/** The tool catalog: what the model is shown, how its calls are validated and executed. */
export class ToolRegistry extends Context.Tag("myclaw/ToolRegistry")<ToolRegistry, {
  readonly tools: ReadonlyArray<Tool>
  readonly catalog: ReadonlyArray<LlmToolSpec>
  readonly find: (name: string) => Tool | undefined
  readonly validate: (call: ToolCall) => Validated
  /** Runs a validated call under the tool timeout; failures become `failed` results, never errors. */
  readonly execute: (call: PreparedCall, tool: Tool) => Effect.Effect<ToolResult>
}>() {}
