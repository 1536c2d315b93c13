import { assert, describe, it } from "@effect/vitest"
import type { Message } from "../../src/domain/LlmTypes.js"
import { MessagesFold } from "../../src/domain/MessagesFold.js"
import { countWithoutTokenizer, messagesChars } from "../../src/domain/Tokens.js"

const user = (content: string): Message => ({ role: "user", content })
const call = (id: string, args: unknown): Message => ({
  role: "assistant",
  content: "",
  toolCalls: [{ id, name: "add", args }]
})
const result = (id: string, content: string): Message => ({
  role: "tool",
  toolCallId: id,
  name: "add",
  content,
  isError: false
})

describe("MessagesFold", () => {
  it("folds only the messages added since the last list, when the new one begins with its objects", () => {
    const folded: Array<string> = []
    const fold = new MessagesFold<ReadonlyArray<string>>([], (value, message, index) => {
      folded.push(`${index}:${message.content}`)
      return [...value, message.content]
    })
    const a = user("a")
    const b = call("1", { x: 1 })
    const c = result("1", "c")
    assert.deepStrictEqual(fold.of([a]), ["a"])
    assert.deepStrictEqual(fold.of([a, b, c]), ["a", "", "c"])
    assert.deepStrictEqual(fold.of([a, b, c]), ["a", "", "c"])
    assert.deepStrictEqual(folded, ["0:a", "1:", "2:c"])
  })

  it("folds any other list from the start: shorter, another first message, equal values in other objects", () => {
    const folded: Array<number> = []
    const fold = new MessagesFold(0, (value, message, index) => {
      folded.push(index)
      return value + message.content.length
    })
    const a = user("aa")
    const b = result("1", "bbb")
    assert.strictEqual(fold.of([a, b]), 5)
    folded.length = 0
    assert.strictEqual(fold.of([a]), 2)
    assert.deepStrictEqual(folded, [0])
    folded.length = 0
    assert.strictEqual(fold.of([user("x"), b, b]), 7)
    assert.deepStrictEqual(folded, [0, 1, 2])
    folded.length = 0
    assert.strictEqual(fold.of([user("x"), b, b, a]), 9)
    assert.deepStrictEqual(folded, [0, 1, 2, 3])
    folded.length = 0
    assert.strictEqual(fold.of([]), 0)
    assert.deepStrictEqual(folded, [])
  })
})

describe("a turn's count of its messages' characters", () => {
  it("is the count without the fold, for every list a turn may give it", () => {
    const counted = messagesChars()
    const first = user("add 1 and 2, then 3")
    const asked = call("1", { a: 1, b: 2 })
    const answered = result("1", "3")
    const lists: Array<ReadonlyArray<Message>> = [
      [first],
      [first, asked],
      [first, asked, answered],
      [user("summary: 1 + 2 = 3"), answered],
      [user("summary: 1 + 2 = 3"), answered, call("2", { a: 3, b: 3 })],
      [first, asked]
    ]
    for (const messages of lists) {
      for (const limit of [1, 1_000_000]) {
        assert.strictEqual(
          countWithoutTokenizer(messages, "openai", limit, counted),
          countWithoutTokenizer(messages, "openai", limit)
        )
        assert.strictEqual(
          countWithoutTokenizer(messages, "estimate", limit, counted),
          countWithoutTokenizer(messages, "estimate", limit)
        )
      }
    }
    // The estimate: characters (a tool call counts its name and its arguments' JSON) over 3.5, rounded up.
    assert.strictEqual(countWithoutTokenizer([first, asked], "estimate", 0, counted), Math.ceil((19 + 16) / 3.5))
  })
})
