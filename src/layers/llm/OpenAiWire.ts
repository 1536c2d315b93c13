import { Schema } from "effect"
import type { OpenAiProviderConfig } from "../../domain/AppConfig.js"
import type { LlmRequest, Message } from "../../domain/LlmTypes.js"
import { wellFormed } from "../../domain/Text.js"
import type { ToolCall } from "../../domain/ToolCall.js"

/**
 * The Chat Completions wire format (`POST {baseUrl}/chat/completions`, non-streaming): the request body we
 * send, and the response and error bodies decoded tolerantly, since compatible servers differ in the details.
 */

const wireArguments = (call: ToolCall): string => call.raw_arguments ?? JSON.stringify(call.args) ?? "{}"

const wireMessage = (message: Message) => {
  switch (message.role) {
    case "user":
      return { role: "user", content: wellFormed(message.content) }
    case "assistant":
      return message.toolCalls.length === 0
        ? { role: "assistant", content: wellFormed(message.content) }
        : {
          role: "assistant",
          content: message.content === "" ? null : wellFormed(message.content),
          tool_calls: message.toolCalls.map((call) => ({
            id: call.id,
            type: "function",
            function: { name: call.name, arguments: wireArguments(call) }
          }))
        }
    case "tool":
      return { role: "tool", tool_call_id: message.toolCallId, content: wellFormed(message.content) }
  }
}

/** The request body; throws only if a tool call's args cannot be serialised (the caller catches it). */
export const chatCompletionBody = (
  config: Pick<OpenAiProviderConfig, "model" | "maxTokens" | "maxTokensField">,
  request: LlmRequest
): Record<string, unknown> => ({
  model: config.model,
  messages: [
    ...(request.system.length === 0
      ? []
      : [{ role: "system", content: wellFormed(request.system.map((block) => block.text).join("\n\n")) }]),
    ...request.messages.map(wireMessage)
  ],
  ...(request.tools.length === 0 ? {} : {
    tools: request.tools.map((tool) => ({
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: tool.parameters }
    }))
  }),
  [config.maxTokensField]: request.maxTokens ?? config.maxTokens
})

const Nullable = <S extends Schema.Schema.AnyNoContext>(schema: S) => Schema.optional(Schema.NullOr(schema))

/** `type` and `index` are not read (servers omit or misnumber them); `arguments` may be a string or an object. */
export const WireToolCall = Schema.Struct({
  id: Nullable(Schema.String),
  function: Schema.Struct({
    name: Schema.String,
    arguments: Schema.optional(Schema.Unknown)
  })
})

const ContentPart = Schema.Struct({ text: Schema.optional(Schema.String) })

export const WireMessage = Schema.Struct({
  content: Nullable(Schema.Union(Schema.String, Schema.Array(ContentPart))),
  refusal: Nullable(Schema.String),
  tool_calls: Nullable(Schema.Array(WireToolCall))
})

export const WireUsage = Schema.Struct({
  prompt_tokens: Nullable(Schema.Number),
  completion_tokens: Nullable(Schema.Number),
  prompt_tokens_details: Nullable(Schema.Struct({ cached_tokens: Nullable(Schema.Number) }))
})

/** Everything but the shape of what we read is optional here; the provider says what was missing. */
export const ChatCompletion = Schema.Struct({
  model: Nullable(Schema.String),
  choices: Nullable(Schema.Array(Schema.Struct({
    message: Nullable(WireMessage),
    finish_reason: Nullable(Schema.String)
  }))),
  usage: Nullable(WireUsage)
})
export type ChatCompletion = typeof ChatCompletion.Type

const ErrorDetail = Schema.Struct({
  message: Schema.String,
  type: Nullable(Schema.String),
  code: Nullable(Schema.Union(Schema.String, Schema.Number)),
  param: Nullable(Schema.String)
})

/** OpenAI's `{ error: { message, type, code, param } }`, Ollama's `{ error: "..." }`, vLLM's older top-level form. */
export const WireErrorBody = Schema.Union(
  Schema.Struct({ error: Schema.Union(Schema.String, ErrorDetail) }),
  ErrorDetail
)
export type WireErrorBody = typeof WireErrorBody.Type

/** The provider's message, with type, code and param when it gave them. */
export const errorBodyMessage = (body: WireErrorBody): string => {
  const detail = "error" in body ? body.error : body
  if (typeof detail === "string") return detail
  const extras = [
    detail.type == null ? undefined : `type: ${detail.type}`,
    detail.code == null ? undefined : `code: ${detail.code}`,
    detail.param == null ? undefined : `param: ${detail.param}`
  ].filter((extra) => extra !== undefined)
  return extras.length === 0 ? detail.message : `${detail.message} (${extras.join(", ")})`
}
