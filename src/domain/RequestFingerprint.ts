import { canonicalJson } from "./ArgsHash.js"
import type { LlmRequest, Message, SystemBlock } from "./LlmTypes.js"
import { MessagesFold } from "./MessagesFold.js"
import { sha256Hex, sha256HexPrefix } from "./Sha256.js"

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
export const maskVolatile = (text: string): string => {
  // Neither pattern matches without these characters, which most messages lack: a search for a character is
  // several times cheaper than a scan by the pattern.
  const timed = text.includes("T") && text.includes("Z") ? text.replace(ISO_TIME, "<time>") : text
  return timed.includes("untrusted id=") ? timed.replace(WRAPPER_ID, "$1<id>$2") : timed
}

const hash = (value: unknown): string => sha256HexPrefix(maskVolatile(canonicalJson(value)), 32)

/** Exactly these own enumerable keys (in any order). */
const keysAre = (keys: ReadonlyArray<string>, expected: ReadonlyArray<string>): boolean => {
  if (keys.length !== expected.length) return false
  for (const key of keys) {
    if (!expected.includes(key)) return false
  }
  return true
}

const USER_KEYS = ["role", "content"]
const ASSISTANT_KEYS = ["role", "content", "toolCalls"]
const TOOL_KEYS = ["role", "toolCallId", "name", "content", "isError"]
const CALL_KEYS = ["id", "name", "args"]

/** A tool call's canonical JSON, its keys written in their order. */
const toolCallJson = (call: unknown): string => {
  if (typeof call !== "object" || call === null || Array.isArray(call)) return canonicalJson(call)
  const record = call as Record<string, unknown>
  const { args, id, name } = record
  return typeof id === "string" && typeof name === "string" && args !== undefined &&
      keysAre(Object.keys(record), CALL_KEYS)
    ? `{"args":${canonicalJson(args)},"id":${JSON.stringify(id)},"name":${JSON.stringify(name)}}`
    : canonicalJson(call)
}

/**
 * What `canonicalJson` gives a message, its keys written in their order for the three shapes the runtime makes
 * (sorting and quoting the keys of every message of every step was most of the time its fingerprint took); a
 * message of any other shape is left to `canonicalJson`.
 */
export const messageJson = (message: Message): string => {
  const record = message as unknown as Record<string, unknown>
  const { content, role } = record
  if (typeof content !== "string") return canonicalJson(message)
  const keys = Object.keys(record)
  if (role === "user" && keysAre(keys, USER_KEYS)) return `{"content":${JSON.stringify(content)},"role":"user"}`
  if (role === "tool" && keysAre(keys, TOOL_KEYS)) {
    const { isError, name, toolCallId } = record
    if (typeof isError === "boolean" && typeof name === "string" && typeof toolCallId === "string") {
      const head = `{"content":${JSON.stringify(content)},"isError":${isError}`
      return `${head},"name":${JSON.stringify(name)},"role":"tool","toolCallId":${JSON.stringify(toolCallId)}}`
    }
  }
  if (role === "assistant" && keysAre(keys, ASSISTANT_KEYS) && Array.isArray(record.toolCalls)) {
    const calls: ReadonlyArray<unknown> = record.toolCalls
    let text = `{"content":${JSON.stringify(content)},"role":"assistant","toolCalls":[`
    for (let i = 0; i < calls.length; i++) {
      if (i > 0) text += ","
      // A hole is left empty, as canonicalJson leaves it.
      if (i in calls) text += toolCallJson(calls[i])
    }
    return `${text}]}`
  }
  return canonicalJson(message)
}

/**
 * A message's hash as the messages' hash joins it. A plain slice: the joined text is hashed (and so flattened, no
 * longer holding the slices) before anything keeps it, so copying each prefix out of its digest is not needed.
 */
const messageHash = (message: Message): string => sha256Hex(maskVolatile(messageJson(message))).slice(0, 32)

// The system prompt and the catalog are the same arrays for every Thought of a turn (the catalog for every turn):
// their hashes are computed once per array.
const hashed = new WeakMap<object, string>()
const hashOnce = <A>(value: ReadonlyArray<A>, compute: (value: ReadonlyArray<A>) => string = hash): string => {
  const known = hashed.get(value)
  if (known !== undefined) return known
  const computed = compute(value)
  hashed.set(value, computed)
  return computed
}

/** The same keys holding the same values, none of them an object. */
const sameBlock = (a: SystemBlock, b: SystemBlock): boolean => {
  const x = a as unknown as Record<string, unknown>
  const y = b as unknown as Record<string, unknown>
  const keys = Object.keys(x)
  if (keys.length !== Object.keys(y).length) return false
  for (const key of keys) {
    const value = x[key]
    if (value !== y[key] || (typeof value === "object" && value !== null)) return false
  }
  return true
}

// Each turn builds its system prompt anew, from blocks that seldom change (the constitution, the tools, the
// memory: the same objects from turn to turn) and, in a session with a summary, a block of its own; requests of
// other prompts (the summariser's) come in between. Each block's part of the hashed text is kept with a copy of
// the block, and used while the block is equal to its copy (a block changed in place is serialised again). The
// hash is the same as the whole prompt's: a block's canonical JSON is an object, and neither volatile pattern
// spans the commas between them, so masking block by block masks the same parts.
const parts = new WeakMap<SystemBlock, { readonly copy: SystemBlock; readonly part: string }>()
const partOf = (block: SystemBlock): string => {
  const known = parts.get(block)
  if (known !== undefined && sameBlock(known.copy, block)) return known.part
  const part = maskVolatile(canonicalJson(block))
  parts.set(block, { copy: { ...block }, part })
  return part
}
const systemContentHash = (system: ReadonlyArray<SystemBlock>): string => {
  let text = "["
  for (let i = 0; i < system.length; i++) text += i === 0 ? partOf(system[i]!) : `,${partOf(system[i]!)}`
  return sha256HexPrefix(`${text}]`, 32)
}

/** What the messages' hash hashes: each message's hash, joined by commas. */
const joinHashes = (joined: string, message: Message, index: number): string =>
  index === 0 ? messageHash(message) : `${joined},${messageHash(message)}`

/**
 * A replayed turn's fold of its messages' hashes: each request hashes only the messages added since the last one
 * (a live turn fingerprints its Thoughts together when it makes its trace, with `prefixFingerprints`).
 */
export const messagesFingerprint = (): MessagesFold<string> => new MessagesFold("", joinHashes)

/** The request's fingerprint; a replay passes its `messagesFingerprint()` so that each message is hashed once. */
export const fingerprintRequest = (request: LlmRequest, messages?: MessagesFold<string>): RequestFingerprint => ({
  system: hashOnce(request.system, systemContentHash),
  messages: sha256HexPrefix(
    messages === undefined ? request.messages.map(messageHash).join(",") : messages.of(request.messages),
    32
  ),
  message_count: request.messages.length,
  tools: hashOnce(request.tools)
})

/**
 * The fingerprints of requests that share `system` and `tools` and whose messages are the first `counts[i]` of
 * `messages` (ascending, none above its length): what `fingerprintRequest` gives each of them, each message hashed
 * once. A turn fingerprints its Thoughts this way when its trace is made, rather than holding a fingerprint per
 * Thought (and the running text they hash) while it waits on the model.
 */
export const prefixFingerprints = (
  system: ReadonlyArray<SystemBlock>,
  tools: LlmRequest["tools"],
  messages: ReadonlyArray<Message>,
  counts: ReadonlyArray<number>
): Array<RequestFingerprint> => {
  const systemHash = hashOnce(system, systemContentHash)
  const toolsHash = hashOnce(tools)
  const fingerprints: Array<RequestFingerprint> = []
  let joined = ""
  let hashed = 0
  for (const count of counts) {
    for (; hashed < count; hashed++) joined = joinHashes(joined, messages[hashed]!, hashed)
    fingerprints.push({
      system: systemHash,
      messages: sha256HexPrefix(joined, 32),
      message_count: count,
      tools: toolsHash
    })
  }
  return fingerprints
}

/** The request as recorded when `traces.recordRequests` is on: plain JSON, volatile parts masked. */
export const recordableRequest = (request: LlmRequest): unknown =>
  JSON.parse(maskVolatile(JSON.stringify({
    tier: request.tier,
    system: request.system,
    messages: request.messages,
    tools: request.tools
  })))
