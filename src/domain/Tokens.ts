import { Effect } from "effect"
import type { AppConfig } from "./AppConfig.js"
import type { Message } from "./LlmTypes.js"
import { MessagesFold } from "./MessagesFold.js"

/** How a prompt's tokens are counted: OpenAI's own tokenizer for its models, an estimate for the others. */
export type TokenCounting = "openai" | "estimate"

/** Characters per token of the estimate: measured on English prose and JSON for Claude and Llama models. */
export const CHARS_PER_TOKEN = 3.5

const OPENAI_MODEL = /^(gpt-|chatgpt-|o\d)/

/** The counting that fits the first model of the frontier tier (the one most Thoughts go to). */
export const tokenCountingOf = (config: AppConfig): TokenCounting => {
  const first = config.tiers.frontier[0]
  return first !== undefined && first.provider === "openai" && OPENAI_MODEL.test(first.model) ? "openai" : "estimate"
}

let tokenizer: Promise<(text: string) => number> | undefined
/** The o200k tokenizer, loaded on first use (its tables take a moment to load, so not at start). */
const openAiCount = (): Promise<(text: string) => number> =>
  tokenizer ??= import("gpt-tokenizer/encoding/o200k_base").then((module) => (text: string) => module.countTokens(text))

const messageText = (message: Message): string =>
  message.role === "assistant"
    ? message.content + message.toolCalls.map((call) => call.name + JSON.stringify(call.args ?? "")).join("")
    : message.content

/** The estimate: characters over CHARS_PER_TOKEN, rounded up. */
export const estimateTokens = (text: string): number => Math.ceil(text.length / CHARS_PER_TOKEN)

const messageChars = (chars: number, message: Message): number => chars + messageText(message).length

/**
 * A turn's fold of its messages' characters: a turn's messages are counted before every Thought, and each one is
 * measured once.
 */
export const messagesChars = (): MessagesFold<number> => new MessagesFold(0, messageChars)

/** `countMessageTokens` when it needs no tokenizer (the estimate, or fewer characters than `limit`), else undefined. */
export const countWithoutTokenizer = (
  messages: ReadonlyArray<Message>,
  counting: TokenCounting,
  limit: number,
  counted?: MessagesFold<number>
): number | undefined => {
  const chars = counted === undefined ? messages.reduce(messageChars, 0) : counted.of(messages)
  return counting === "estimate" || chars < limit ? Math.ceil(chars / CHARS_PER_TOKEN) : undefined
}

/**
 * The tokens of `messages` (the turn history and the user message), counted the configured way. Below
 * `limit` characters no counting is needed to know they are below `limit` tokens (a token is at least one
 * character): the answer is then the estimate, at no cost.
 */
export const countMessageTokens = (
  messages: ReadonlyArray<Message>,
  counting: TokenCounting,
  limit: number
): Effect.Effect<number> => {
  const counted = countWithoutTokenizer(messages, counting, limit)
  if (counted !== undefined) return Effect.succeed(counted)
  const texts = messages.map(messageText)
  return Effect.map(
    Effect.promise(openAiCount),
    (count) => texts.reduce((sum, text) => sum + count(text), 0)
  )
}
