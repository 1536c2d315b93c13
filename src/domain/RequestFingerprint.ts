import { canonicalJson } from "./ArgsHash.js"
import type { LlmRequest, Message } from "./LlmTypes.js"
import { sha256HexPrefix } from "./Sha256.js"

/**
 * The fingerprint of one LLM request: a hash of each part the runtime builds (system prompt, messages, tool
 * catalog). Timestamps and untrusted-wrapper ids are masked first, so two runs of the same turn at other times
 * fingerprint the same.
 */
export interface RequestFingerprint {
  readonly system: string
  readonly messages: string
  readonly message_count: number
  readonly tools: string
}

const ISO_TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g
// Also matches inside JSON text, where the quotes are escaped.
const WRAPPER_ID = /(<\/?untrusted id=\\?")[^"\\]*(\\?")/g

/** The text with every ISO 8601 UTC time and every untrusted-wrapper id masked. */
export const maskVolatile = (text: string): string => text.replace(ISO_TIME, "<time>").replace(WRAPPER_ID, "$1<id>$2")

const hash = (value: unknown): string => sha256HexPrefix(maskVolatile(canonicalJson(value)), 32)

// The system prompt and the catalog are the same arrays for every Thought of a turn (the catalog for every turn):
// their hashes are computed once per array.
const hashed = new WeakMap<object, string>()
const hashOnce = (value: ReadonlyArray<unknown>): string => {
  const known = hashed.get(value)
  if (known !== undefined) return known
  const computed = hash(value)
  hashed.set(value, computed)
  return computed
}

/** How many hex digits a message's hash has. */
export const MESSAGE_HASH_DIGITS = 32

/** The hash of one message. */
export const messageHash = (message: Message): string =>
  sha256HexPrefix(maskVolatile(canonicalJson(message)), MESSAGE_HASH_DIGITS)

/**
 * The request's fingerprint. The messages' hash is the hash of theirs, comma-joined; `memo` (the turn's
 * MessageMemo) hashes each message once for all the Thoughts that send it.
 */
export const fingerprintRequest = (
  request: LlmRequest,
  memo?: { readonly hashes: (messages: ReadonlyArray<Message>) => string }
): RequestFingerprint => ({
  system: hashOnce(request.system),
  messages: sha256HexPrefix(
    memo === undefined ? request.messages.map(messageHash).join(",") : memo.hashes(request.messages),
    32
  ),
  message_count: request.messages.length,
  tools: hashOnce(request.tools)
})

/** The request as recorded when `traces.recordRequests` is on: plain JSON, volatile parts masked. */
export const recordableRequest = (request: LlmRequest): unknown =>
  JSON.parse(maskVolatile(JSON.stringify({
    tier: request.tier,
    system: request.system,
    messages: request.messages,
    tools: request.tools
  })))
