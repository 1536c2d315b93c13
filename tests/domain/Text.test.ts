import { assert, describe, it } from "@effect/vitest"
import { cutAt, forTerminal, truncateEnd, wellFormed } from "../../src/domain/Text.js"

describe("cutting text", () => {
  it("cutAt keeps at most max code units and never half of a surrogate pair", () => {
    assert.strictEqual(cutAt("abc", 5), "abc")
    assert.strictEqual(cutAt("abcdef", 3), "abc")
    assert.strictEqual(cutAt("ab😀cd", 3), "ab", "the emoji's halves are the 3rd and 4th units")
    assert.strictEqual(cutAt("ab😀cd", 4), "ab😀")
    for (let max = 1; max <= 12; max++) assert.isTrue(cutAt("a😀😀b😀😀", max).isWellFormed(), `max ${max}`)
  })

  it("truncateEnd marks a cut with an ellipsis, outside the emoji it would have split", () => {
    assert.strictEqual(truncateEnd("short", 10), "short")
    assert.strictEqual(truncateEnd("ab😀cd", 3), "ab…")
    assert.strictEqual(truncateEnd("ab😀cd", 4), "ab😀…")
  })

  it("wellFormed turns a lone surrogate of either half into U+FFFD and leaves whole text as it is", () => {
    const whole = "plain, 😀, and 中文"
    assert.strictEqual(wellFormed(whole), whole)
    assert.strictEqual(wellFormed("cut \ud83d"), "cut \ufffd")
    assert.strictEqual(wellFormed("\ude00 cut"), "\ufffd cut")
  })

  it("forTerminal escapes what a terminal acts on (C0 but tab and newline, DEL, C1), nothing else", () => {
    assert.strictEqual(forTerminal("a\u001b[2Jb\u0007c\u007f\u009b\rd"), "a\\u001b[2Jb\\u0007c\\u007f\\u009b\\u000dd")
    const plain = "tab\there\nnew line, città, 😀, \u202e stays (shown as it is: the terminal does not act on it)"
    assert.strictEqual(forTerminal(plain), plain)
  })
})
