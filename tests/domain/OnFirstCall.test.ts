import { assert, describe, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { onFirstCall } from "../../src/domain/OnFirstCall.js"

describe("onFirstCall", () => {
  it("makes the function on its first call, once, and answers as that function", () => {
    let made = 0
    const decode = onFirstCall(() => {
      made += 1
      return Schema.decodeUnknownEither(Schema.NumberFromString)
    })
    assert.strictEqual(made, 0)
    assert.deepStrictEqual(decode("42"), Either.right(42))
    assert.isTrue(Either.isLeft(decode("forty-two")))
    assert.strictEqual(made, 1)
  })

  it("passes a parser's options on", () => {
    const decode = onFirstCall(() => Schema.decodeUnknownEither(Schema.Struct({ a: Schema.Number })))
    assert.isTrue(Either.isRight(decode({ a: 1, b: 2 })))
    assert.isTrue(Either.isLeft(decode({ a: 1, b: 2 }, { onExcessProperty: "error" })))
  })
})
