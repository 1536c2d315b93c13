import { Schema } from "effect"
import type { FinishReason } from "../../domain/ExecutionTrace.js"
import type { LlmRequest, Message } from "../../domain/LlmTypes.js"
import { wellFormed } from "../../domain/Text.js"
import type { ToolCall } from "../../domain/ToolCall.js"

/** The Anthropic Messages API wire format (`POST /v1/messages`, non-streaming), request and response. */

type TextBlock = { readonly type: "text"; readonly text: string }
type ToolUseBlock = { readonly type: "tool_use"; readonly id: string; readonly name: string; readonly input: unknown }
type ToolResultBlock = {
  readonly type: "tool_result"
  readonly tool_use_id: string
  readonly content: string
  readonly is_error?: true
}
type Block = TextBlock | ToolUseBlock | ToolResultBlock
type WireMessage = { readonly role: "user" | "assistant"; readonly content: string | ReadonlyArray<Block> }

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

// `input` must be an object: a call whose arguments were not valid JSON (raw_arguments) or not an
// object is replayed as `{}`; the validator already told the model what was wrong with it.
const toolUse = (call: ToolCall): ToolUseBlock => ({
  type: "tool_use",
  id: call.id,
  name: call.name,
  input: call.raw_arguments === undefined && isObject(call.args) ? call.args : {}
})

const blocksOf = (message: Message): Array<Block> => {
  switch (message.role) {
    case "user":
      return message.content === "" ? [] : [{ type: "text", text: wellFormed(message.content) }]
    case "assistant":
      return [
        ...(message.content === "" ? [] : [{ type: "text" as const, text: wellFormed(message.content) }]),
        ...message.toolCalls.map(toolUse)
      ]
    case "tool":
      return [{
        type: "tool_result",
        tool_use_id: message.toolCallId,
        content: wellFormed(message.content),
        ...(message.isError ? { is_error: true as const } : {})
      }]
  }
}

/**
 * Port messages as Anthropic messages: tool results become `tool_result` blocks of a user message, and
 * consecutive messages of the same role are merged, so all the results of one assistant turn arrive in
 * the next user message, tool results first (the API rejects anything else). A lone user text stays a string.
 */
export const encodeMessages = (messages: ReadonlyArray<Message>): Array<WireMessage> => {
  const merged: Array<{ role: "user" | "assistant"; blocks: Array<Block> }> = []
  for (const message of messages) {
    const blocks = blocksOf(message)
    if (blocks.length === 0) continue
    const role = message.role === "assistant" ? "assistant" : "user"
    const last = merged[merged.length - 1]
    if (last !== undefined && last.role === role) last.blocks.push(...blocks)
    else merged.push({ role, blocks })
  }
  return merged.map(({ blocks, role }) => {
    if (role === "assistant") return { role, content: blocks }
    const only = blocks.length === 1 ? blocks[0]! : undefined
    if (only !== undefined && only.type === "text") return { role, content: only.text }
    const results = blocks.filter((block) => block.type === "tool_result")
    return { role, content: [...results, ...blocks.filter((block) => block.type !== "tool_result")] }
  })
}

/**
 * System blocks as text blocks, one per non-empty block, with one cache breakpoint on the last block of
 * the stable prefix. Anthropic renders tools before system, so the breakpoint caches tools + stable system.
 */
export const encodeSystem = (system: LlmRequest["system"]) => {
  const sent = system.filter((block) => block.text !== "")
  const firstVolatile = sent.findIndex((block) => !block.stable)
  const breakpoint = (firstVolatile === -1 ? sent.length : firstVolatile) - 1
  return sent.map((block, index) =>
    index === breakpoint
      ? { type: "text" as const, text: wellFormed(block.text), cache_control: { type: "ephemeral" as const } }
      : { type: "text" as const, text: wellFormed(block.text) }
  )
}

export const encodeRequest = (model: string, maxTokens: number, request: LlmRequest) => {
  const system = encodeSystem(request.system)
  return {
    model,
    max_tokens: maxTokens,
    ...(system.length === 0 ? {} : { system }),
    messages: encodeMessages(request.messages),
    ...(request.tools.length === 0 ? {} : {
      tools: request.tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        input_schema: tool.parameters
      }))
    })
  }
}

const Count = Schema.Number.pipe(Schema.nonNegative())
const knownBlocks: ReadonlySet<string> = new Set(["text", "tool_use"])

/** Blocks of other types (thinking, server tools, ...) are skipped, but a text or tool_use block must be whole. */
const ResponseBlock = Schema.Union(
  Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }),
  Schema.Struct({
    type: Schema.Literal("tool_use"),
    id: Schema.String,
    name: Schema.String,
    input: Schema.optionalWith(Schema.Unknown, { default: () => ({}) })
  }),
  Schema.Struct({
    type: Schema.String.pipe(Schema.filter((type) => !knownBlocks.has(type), {
      message: () => "a text or tool_use block lacks one of its fields"
    }))
  })
)

export const MessageResponse = Schema.Struct({
  model: Schema.optional(Schema.String),
  content: Schema.Array(ResponseBlock),
  stop_reason: Schema.optional(Schema.NullOr(Schema.String)),
  usage: Schema.optional(Schema.Struct({
    input_tokens: Count,
    output_tokens: Count,
    cache_creation_input_tokens: Schema.optional(Schema.NullOr(Count)),
    cache_read_input_tokens: Schema.optional(Schema.NullOr(Count))
  }))
})
export type MessageResponse = typeof MessageResponse.Type

/** `{"type": "error", "error": {"type", "message"}, "request_id"}`, as in docs.claude.com/en/api/errors. */
export const ErrorBody = Schema.Struct({
  error: Schema.Struct({ type: Schema.String, message: Schema.String }),
  request_id: Schema.optional(Schema.NullOr(Schema.String))
})

type ResponseBlock = typeof ResponseBlock.Type
type ToolUseResponse = Extract<ResponseBlock, { readonly id: string }>

const isText = (block: ResponseBlock): block is Extract<ResponseBlock, { readonly text: string }> =>
  block.type === "text"
const isToolUse = (block: ResponseBlock): block is ToolUseResponse => block.type === "tool_use"

/** The answer's text (text blocks joined) and its tool calls, in order; other block types are ignored. */
export const textOf = (content: ReadonlyArray<ResponseBlock>): string =>
  content.filter(isText).map((block) => block.text).join("")

export const toolCallsOf = (content: ReadonlyArray<ResponseBlock>): Array<ToolCall> =>
  content.filter(isToolUse).map((block) => ({ id: block.id, name: block.name, args: block.input }))

export const finishReason = (stopReason: string | null | undefined): FinishReason => {
  switch (stopReason) {
    case "end_turn":
    case "stop_sequence":
      return "stop"
    case "tool_use":
      return "tool_call"
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length"
    case "refusal":
      return "content_filter"
    default:
      return "other"
  }
}

/**
 * Anthropic's `input_tokens` excludes the cached prefix: the prompt is input + cache reads + cache writes.
 * Cache reads are `cached` (priced as cached input); cache writes count as plain input, so they are
 * billed at the input price, not at Anthropic's higher cache-write price.
 */
export const usageOf = (usage: MessageResponse["usage"]) => {
  if (usage === undefined) return { input: 0, output: 0, cached: 0 }
  const read = usage.cache_read_input_tokens ?? 0
  const written = usage.cache_creation_input_tokens ?? 0
  return {
    input: usage.input_tokens + read + written,
    output: usage.output_tokens,
    cached: read,
    cacheWrite: written
  }
}
