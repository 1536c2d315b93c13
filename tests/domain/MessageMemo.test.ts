import { assert, describe, it } from "@effect/vitest"
import { FastCheck } from "effect"
import type { LlmRequest, Message } from "../../src/domain/LlmTypes.js"
import { MessageMemo } from "../../src/domain/MessageMemo.js"
import { fingerprintRequest } from "../../src/domain/RequestFingerprint.js"
import { countWithoutTokenizer } from "../../src/domain/Tokens.js"

const user = (content: string): Message => ({ role: "user", content })
const tool = (content: string): Message => ({
  role: "tool",
  toolCallId: "call_1",
  name: "add",
  content,
  isError: false
})
const assistant = (a: number): Message => ({
  role: "assistant",
  content: "",
  toolCalls: [{ id: `call_${a}`, name: "add", args: { a, b: 2 } }]
})

const request = (messages: ReadonlyArray<Message>): LlmRequest => ({
  tier: "frontier",
  system: [{ name: "constitution", text: "Be brief.", stable: true }],
  messages,
  tools: []
})

/** What the memo answers for `messages` equals what a fresh computation gives. */
const agrees = (memo: MessageMemo, messages: ReadonlyArray<Message>): boolean =>
  fingerprintRequest(request(messages), memo).messages === fingerprintRequest(request(messages)).messages &&
  countWithoutTokenizer(messages, "estimate", 1_000_000, memo) ===
    countWithoutTokenizer(messages, "estimate", 1_000_000)

describe("MessageMemo", () => {
  it("gives the fingerprint and the count of a fresh computation as a turn's messages grow and are compacted", () => {
    const memo = new MessageMemo()
    const first = user("Add 1 and 2, then 3.")
    const grown = [first, assistant(1), tool("3")]
    for (
      const messages of [
        [],
        [first],
        grown.slice(0, 2),
        grown,
        // Compaction: the turn's own history replaced by a summary after the user message.
        [first, tool("summary: 1 + 2 = 3")],
        [first, tool("summary: 1 + 2 = 3"), assistant(3), tool("6")],
        // An equal message that is another object, at the start.
        [user("Add 1 and 2, then 3.")]
      ]
    ) {
      assert.isTrue(agrees(memo, messages), JSON.stringify(messages))
    }
  })

  it("computes a message once for all the Thoughts that send it", () => {
    const memo = new MessageMemo()
    const messages = [user("a"), assistant(1), tool("3")]
    memo.hashes(messages)
    // The same objects again in a new array, and a new one at the end: the known ones keep their hash, however
    // the message objects change afterwards (they never do in a turn; here it shows what was computed when).
    const grown = [...messages, tool("6")]
    ;(messages[0] as { content: string }).content = "changed"
    const joined = memo.hashes(grown)
    const fresh = fingerprintRequest(request([user("a"), assistant(1), tool("3"), tool("6")])).messages
    assert.strictEqual(fingerprintRequest(request(grown), { hashes: () => joined }).messages, fresh)
  })

  it("agrees with a fresh computation through any sequence of growth and replacement", () => {
    const pool = Array.from(
      { length: 8 },
      (_, i) => (i % 3 === 0 ? user(`u${i}`) : i % 3 === 1 ? assistant(i) : tool(`t${i}`))
    )
    FastCheck.assert(
      FastCheck.property(
        FastCheck.array(FastCheck.array(FastCheck.nat({ max: 7 }), { maxLength: 6 }), { maxLength: 12 }),
        (sequences) => {
          const memo = new MessageMemo()
          return sequences.every((picks) => agrees(memo, picks.map((i) => pool[i]!)))
        }
      ),
      { numRuns: 300 }
    )
  })
})
