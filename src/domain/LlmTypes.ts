import type { FailedAttempt, FinishReason, Tier } from "./ExecutionTrace.js"
import type { ToolCall } from "./ToolCall.js"

/**
 * The Llm port's own vocabulary: messages and a tool catalog in; text, raw tool
 * calls, usage and finish reason out. Invalid tool calls are data here, never an exception.
 */

/** A block of the system prompt; `stable` blocks form the cacheable prefix (blocks 1-4). */
export interface SystemBlock {
  readonly name: string
  readonly text: string
  readonly stable: boolean
}

export type Message =
  | { readonly role: "user"; readonly content: string }
  | { readonly role: "assistant"; readonly content: string; readonly toolCalls: ReadonlyArray<ToolCall> }
  | {
    readonly role: "tool"
    readonly toolCallId: string
    readonly name: string
    readonly content: string
    /** true for a validation error or a failed execution: providers mark the result as an error. */
    readonly isError: boolean
  }

/** A tool as the model sees it: name, description and the JSON Schema of its parameters. */
export interface LlmToolSpec {
  readonly name: string
  readonly description: string
  readonly parameters: Readonly<Record<string, unknown>>
}

export interface LlmRequest {
  readonly tier: Tier
  readonly system: ReadonlyArray<SystemBlock>
  readonly messages: ReadonlyArray<Message>
  readonly tools: ReadonlyArray<LlmToolSpec>
  readonly maxTokens?: number | undefined
}

export interface Usage {
  readonly input: number
  readonly output: number
  readonly cached: number
  /** Input tokens written to the provider's prompt cache (Anthropic bills them above the input price). */
  readonly cacheWrite?: number | undefined
}

export interface LlmResponse {
  /** The model that really answered, as reported by the provider. */
  readonly model: string
  /** The configured provider that answered. */
  readonly provider: string
  readonly tier: Tier
  /** Retries and failovers that came before this answer. */
  readonly failedAttempts: ReadonlyArray<FailedAttempt>
  readonly text: string
  readonly toolCalls: ReadonlyArray<ToolCall>
  readonly usage: Usage
  readonly finishReason: FinishReason
  readonly costUsd: number
}
