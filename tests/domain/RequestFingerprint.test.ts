import { assert, describe, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { canonicalJson } from "../../src/domain/ArgsHash.js"
import type { LlmRequest, Message, SystemBlock } from "../../src/domain/LlmTypes.js"
import {
  fingerprintRequest,
  maskVolatile,
  messageJson,
  messagesFingerprint,
  prefixFingerprints
} from "../../src/domain/RequestFingerprint.js"
import { sha256HexPrefix } from "../../src/domain/Sha256.js"

const request = (system: ReadonlyArray<SystemBlock>): LlmRequest => ({
  tier: "frontier",
  system,
  messages: [{ role: "user", content: "hello" }],
  tools: []
})

/** The system prompt's hash as defined: its canonical JSON, volatile parts masked, SHA-256, 32 digits. */
const expected = (system: ReadonlyArray<SystemBlock>) => sha256HexPrefix(maskVolatile(canonicalJson(system)), 32)

const prompt = (soul: string, memory = ""): Array<SystemBlock> => [
  { name: "constitution", text: soul, stable: true },
  { name: "tools", text: "# Tools\n- fs_read: read a file", stable: true },
  { name: "memory", text: memory, stable: true }
]

describe("the fingerprint of a request's system prompt", () => {
  it("is the hash of the prompt's content, for each new prompt, equal to the last one or not", () => {
    const prompts = [
      prompt("Be careful."),
      prompt("Be careful."),
      prompt("Be carefuL."),
      prompt("Be careful.", "likes tea"),
      prompt("Be careful."),
      [...prompt("Be careful."), { name: "summary", text: "earlier: tea", stable: false }],
      prompt("Be careful.").map((block) => block.name === "tools" ? { ...block, stable: false } : block),
      prompt("Be careful.")
    ]
    for (const system of prompts) assert.strictEqual(fingerprintRequest(request(system)).system, expected(system))
    assert.notStrictEqual(expected(prompts[0]!), expected(prompts[2]!))
    assert.notStrictEqual(expected(prompts[0]!), expected(prompts[6]!))
  })

  it("is the hash of the whole prompt when only its last blocks change, as sessions with summaries take turns", () => {
    const stable = prompt("Be careful, it is 2026-01-01T00:00:00Z.", "likes tea")
    const summary = (text: string): SystemBlock => ({ name: "summary", text, stable: false })
    const wrapped = (id: string) =>
      `<untrusted id="${id}" source="web">said "hi" at 2026-02-03T04:05:06.789Z</untrusted>`
    const prompts: Array<ReadonlyArray<SystemBlock>> = [
      [...stable, summary("earlier: tea")],
      [...stable, summary(wrapped("w-1"))],
      [...stable, summary("earlier: tea")],
      stable,
      [...stable, summary(wrapped("w-2")), summary("and coffee")],
      [...stable, summary(wrapped("w-3"))],
      // A block in the middle changed: what follows it is hashed again.
      [stable[0]!, { ...stable[1]!, text: "# Tools\n- fs_write: write a file" }, stable[2]!, summary("earlier: tea")],
      [stable[0]!],
      [],
      [...stable, summary("earlier: tea")]
    ]
    for (const system of prompts) assert.strictEqual(fingerprintRequest(request(system)).system, expected(system))
    // Masked block by block as in the whole text: the wrapper ids and the times do not count.
    assert.strictEqual(expected(prompts[1]!), expected(prompts[5]!))
    assert.notStrictEqual(expected(prompts[0]!), expected(prompts[1]!))
    assert.notStrictEqual(expected(prompts[7]!), expected(prompts[8]!))
  })

  it("follows a block changed in place after its prompt was hashed", () => {
    const first = prompt("Not hashed before.")
    const before = fingerprintRequest(request(first)).system
    const changed = first[0] as { text: string }
    changed.text = "Be bold."
    const again = [...first]
    assert.strictEqual(fingerprintRequest(request(again)).system, expected(again))
    assert.notStrictEqual(fingerprintRequest(request(again)).system, before)
  })

  it("compares a block's values, not its objects: an object value is never taken as equal", () => {
    const withObject = (tags: ReadonlyArray<string>) =>
      [{ name: "constitution", text: "Be careful.", stable: true, tags }] as unknown as Array<SystemBlock>
    const tags = ["a"]
    const first = withObject(tags)
    fingerprintRequest(request(first))
    tags[0] = "b"
    const second = withObject(tags)
    assert.strictEqual(fingerprintRequest(request(second)).system, expected(second))
  })
})

/** The messages' hash as defined: each message's hash (as the system prompt's), joined by commas, hashed. */
const expectedMessages = (messages: ReadonlyArray<Message>) =>
  sha256HexPrefix(messages.map((message) => sha256HexPrefix(maskVolatile(canonicalJson(message)), 32)).join(","), 32)

/** A tool result that counts how many times its content is read. */
const countingReads = () => {
  let reads = 0
  const message: Message = {
    role: "tool",
    toolCallId: "call_1",
    name: "add",
    get content() {
      reads++
      return "3"
    },
    isError: false
  }
  return { message, reads: () => reads }
}

const withMessages = (messages: ReadonlyArray<Message>): LlmRequest => ({
  tier: "frontier",
  system: [],
  messages,
  tools: []
})

describe("the fingerprint of a request's messages", () => {
  const user: Message = { role: "user", content: "add 1 and 2, at 2026-01-01T00:00:00.000Z" }
  const call: Message = {
    role: "assistant",
    content: "",
    toolCalls: [{ id: "call_1", name: "add", args: { b: 2, a: 1 } }]
  }
  const result: Message = { role: "tool", toolCallId: "call_1", name: "add", content: "3", isError: false }
  const answer: Message = { role: "assistant", content: "3", toolCalls: [] }

  it("is the hash of the messages' hashes, with a turn's fold or without, whatever the fold saw before", () => {
    const fold = messagesFingerprint()
    const other = messagesFingerprint()
    const sequence: Array<ReadonlyArray<Message>> = [
      [],
      [user],
      [user, call],
      [user, call, result],
      [user, call, result],
      [user, call, result, answer],
      // Compacted: the first messages replaced, the rest kept.
      [{ role: "user", content: "summary: added 1 and 2" }, result, answer],
      [{ role: "user", content: "summary: added 1 and 2" }, result, answer, user],
      // Another turn's messages, equal in value but other objects; then a shorter list.
      [{ ...user }, { ...call }],
      [user],
      // As long as the last list or longer, but another first message.
      [{ role: "user", content: "another turn" }, call],
      [user, call, result]
    ]
    for (const messages of sequence) {
      assert.strictEqual(fingerprintRequest(withMessages(messages), fold).messages, expectedMessages(messages))
      assert.strictEqual(fingerprintRequest(withMessages(messages)).messages, expectedMessages(messages))
      assert.strictEqual(fingerprintRequest(withMessages(messages), other).messages, expectedMessages(messages))
      assert.strictEqual(fingerprintRequest(withMessages(messages), fold).message_count, messages.length)
    }
    assert.notStrictEqual(expectedMessages([user, call]), expectedMessages([user]))
  })

  it("reads each message of a turn once, however many Thoughts the turn has", () => {
    const { message: counted, reads } = countingReads()
    const fold = messagesFingerprint()
    const thoughts: Array<ReadonlyArray<Message>> = [[user, call, counted], [user, call, counted, answer], [
      user,
      call,
      counted,
      answer,
      user
    ]]
    for (const messages of thoughts) fingerprintRequest(withMessages(messages), fold)
    assert.strictEqual(reads(), 1)
  })

  it("masks times and wrapper ids in each message, as in the system prompt", () => {
    const fold = messagesFingerprint()
    const at = (time: string): Message => ({
      role: "tool",
      toolCallId: "call_2",
      name: "web_fetch",
      content: `<untrusted id="${time}" retrieved_at="${time}">page</untrusted>`,
      isError: false
    })
    const first = fingerprintRequest(withMessages([user, at("2026-01-01T00:00:00.000Z")]), fold).messages
    const second = fingerprintRequest(withMessages([user, at("2026-02-03T10:11:12.013Z")]), fold).messages
    assert.strictEqual(first, second)
    assert.strictEqual(first, expectedMessages([user, at("2026-01-01T00:00:00.000Z")]))
  })
})

describe("the fingerprints of a turn's requests, taken when its trace is made", () => {
  const system = prompt("Be careful.")
  const tools: LlmRequest["tools"] = [{ name: "add", description: "adds", parameters: { type: "object" } }]
  const messages: ReadonlyArray<Message> = [
    { role: "user", content: "add 1 and 2, at 2026-01-01T00:00:00.000Z" },
    { role: "assistant", content: "", toolCalls: [{ id: "call_1", name: "add", args: { b: 2, a: 1 } }] },
    { role: "tool", toolCallId: "call_1", name: "add", content: "3", isError: false },
    { role: "assistant", content: "", toolCalls: [{ id: "call_2", name: "add", args: { a: 3, b: 3 } }] },
    {
      role: "tool",
      toolCallId: "call_2",
      name: "add",
      content: "<untrusted id=\"x\">6</untrusted id=\"x\">",
      isError: false
    }
  ]

  it("are those of each request on its own: the first `count` messages, the same prompt and tools", () => {
    const counts = [0, 1, 1, 3, 5]
    const fingerprints = prefixFingerprints(system, tools, messages, counts)
    assert.strictEqual(fingerprints.length, counts.length)
    counts.forEach((count, i) =>
      assert.deepStrictEqual(
        fingerprints[i],
        fingerprintRequest({ tier: "frontier", system, tools, messages: messages.slice(0, count) })
      )
    )
    assert.deepStrictEqual(prefixFingerprints(system, tools, messages, []), [])
  })

  it("read each message once, however many requests share it", () => {
    const { message: counted, reads } = countingReads()
    prefixFingerprints(system, tools, [messages[0]!, messages[1]!, counted, messages[3]!], [1, 3, 3, 4])
    assert.strictEqual(reads(), 1)
  })
})

describe("a message's canonical JSON", () => {
  const text = FastCheck.oneof(
    FastCheck.string(),
    FastCheck.string({ unit: "grapheme" }),
    FastCheck.constant("\"\\\u2028")
  )
  const call = FastCheck.record({ id: text, name: text, args: FastCheck.anything({ withSparseArray: true }) })
  const shapes = FastCheck.oneof(
    FastCheck.record({ role: FastCheck.constant("user"), content: text }),
    FastCheck.record({
      role: FastCheck.constant("assistant"),
      content: text,
      toolCalls: FastCheck.array(call, { maxLength: 3 })
    }),
    FastCheck.record({
      role: FastCheck.constant("tool"),
      toolCallId: text,
      name: text,
      content: text,
      isError: FastCheck.boolean()
    })
  )
  // Each shape as the runtime makes it, and changed as no runtime message is: a key added, removed, only inherited
  // or of another type, keys in another order, a call with its raw arguments or none, a hole among the calls, no
  // prototype.
  const changed = FastCheck.tuple(
    shapes,
    FastCheck.constantFrom(
      "as made",
      "extra key",
      "key removed",
      "number content",
      "object content",
      "undefined content",
      "reordered",
      "raw arguments",
      "no arguments",
      "hole",
      "string calls",
      "null prototype",
      "inherited"
    ),
    FastCheck.anything()
  ).map(([message, change, extra]) => {
    const record: Record<string, unknown> = { ...message }
    // A copy: the values drawn are not changed in place.
    const calls = Array.isArray(record.toolCalls) ? [...record.toolCalls as Array<Record<string, unknown>>] : undefined
    if (calls !== undefined) record.toolCalls = calls
    switch (change) {
      case "extra key":
        record.extra = extra
        break
      case "key removed":
        delete record[Object.keys(record)[1]!]
        break
      case "number content":
        record.content = 1
        break
      case "object content":
        record.content = { b: 1, a: extra }
        break
      case "undefined content":
        record.content = undefined
        break
      case "reordered":
        return Object.fromEntries(Object.entries(record).reverse())
      case "raw arguments":
        if (calls?.[0] !== undefined) calls[0] = { ...calls[0], args: null, raw_arguments: "{" }
        break
      case "no arguments":
        if (calls?.[0] !== undefined) calls[0] = { ...calls[0], args: undefined }
        break
      case "hole":
        if (calls !== undefined) calls.length += 1
        break
      case "string calls":
        if (calls !== undefined) record.toolCalls = "calls"
        break
      case "null prototype":
        return Object.assign(Object.create(null) as Record<string, unknown>, record)
      case "inherited": {
        // As many own keys as the shape has, one of its fields only inherited.
        const [key] = Object.keys(record).slice(-1)
        const own: Record<string, unknown> = Object.create({ [key!]: record[key!] })
        for (const [name, value] of Object.entries(record)) if (name !== key) own[name] = value
        own.extra = extra
        return own
      }
    }
    return record
  })

  it("is canonicalJson's text, for the runtime's three shapes and for any other", () => {
    FastCheck.assert(
      FastCheck.property(changed, (message) => messageJson(message as Message) === canonicalJson(message)),
      // A counterexample as found: shrinking `anything()` values can take minutes.
      { numRuns: 3000, endOnFailure: true }
    )
  })
})

describe("maskVolatile", () => {
  it("masks every ISO 8601 UTC time and every untrusted-wrapper id, in text and in JSON text", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["no time here", "no time here"],
      ["at 2026-01-02T03:04:05Z and 2026-01-02T03:04:05.678Z", "at <time> and <time>"],
      ["a T and a Z but no time: T-Z", "a T and a Z but no time: T-Z"],
      ["local 2026-01-02T03:04:05 (no Z)", "local 2026-01-02T03:04:05 (no Z)"],
      ["<untrusted id=\"a1\">x</untrusted id=\"a1\">", "<untrusted id=\"<id>\">x</untrusted id=\"<id>\">"],
      [
        JSON.stringify({ content: "<untrusted id=\"b2\" retrieved_at=\"2026-02-03T10:11:12.013Z\">y" }),
        JSON.stringify({ content: "<untrusted id=\"<id>\" retrieved_at=\"<time>\">y" })
      ],
      ["untrusted id= alone", "untrusted id= alone"]
    ]
    for (const [text, masked] of cases) assert.strictEqual(maskVolatile(text), masked)
  })
})
