import { assert, describe, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { createHash } from "node:crypto"
import { argsHash, canonicalJson } from "../../src/domain/ArgsHash.js"

// The first implementation, kept as the reference: recorded approvals, plan signatures and request fingerprints
// hold hashes of its text, so every later implementation must give exactly the same text.
const reference = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(reference).join(",")}]`
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${reference(v)}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

describe("canonicalJson", () => {
  it("sorts keys at every level and leaves out undefined properties", () => {
    assert.strictEqual(
      canonicalJson({ b: 1, a: [{ d: null, c: "x" }, undefined, 2], e: undefined }),
      `{"a":[{"c":"x","d":null},null,2],"b":1}`
    )
    assert.strictEqual(canonicalJson(undefined), "null")
    assert.strictEqual(canonicalJson({ "é": 1, "Z": 2, "a": 3, "10": 4, "9": 5 }), `{"10":4,"9":5,"Z":2,"a":3,"é":1}`)
  })

  it("walks an object's own keys, whatever JSON.stringify would make of it", () => {
    // Objects whose keys are in order and whose values are leaves: JSON.stringify's text is taken only for plain
    // ones, which these are not.
    assert.strictEqual(canonicalJson(new String("ab")), `{"0":"a","1":"b"}`)
    assert.strictEqual(canonicalJson([new Date(0)]), "[{}]")
    assert.strictEqual(canonicalJson({ a: 1, toJSON: () => "x" }), `{"a":1,"toJSON":null}`)
    assert.strictEqual(canonicalJson({ a: { toJSON: 1 } }), `{"a":{"toJSON":1}}`)
    class Point {
      constructor(readonly x: number) {}
      toJSON() {
        return "point"
      }
    }
    assert.strictEqual(canonicalJson(new Point(1)), `{"x":1}`)
    const withOwn = Object.assign([1, 2], { toJSON: () => "list" })
    assert.strictEqual(canonicalJson(withOwn), "[1,2]")
    // Holes are left empty; undefined and functions in an array are null, as JSON.stringify writes them.
    assert.strictEqual(canonicalJson([1, , 3]), "[1,,3]")
    assert.strictEqual(canonicalJson([undefined, () => 1, "x"]), `[null,null,"x"]`)
  })

  it("gives the reference text for any value, sparse arrays and odd keys included", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.anything({
          withSparseArray: true,
          withNullPrototype: true,
          withObjectString: true,
          withBoxedValues: true,
          withDate: true
        }),
        (value) => canonicalJson(value) === reference(value)
      ),
      { numRuns: 2000 }
    )
  })

  it("orders keys as Array.prototype.sort does, for objects of few keys and of many", () => {
    // Surrogate pairs and characters above U+FFFF: the order is by UTF-16 code units, not by code points.
    const key = FastCheck.oneof(
      FastCheck.string({ maxLength: 4 }),
      FastCheck.string({ unit: "grapheme", maxLength: 3 }),
      FastCheck.constantFrom("\uFFFF", "\u{1F600}", "\uD800", "10", "9", "", "__proto__x")
    )
    FastCheck.assert(
      FastCheck.property(
        FastCheck.oneof(
          FastCheck.dictionary(key, FastCheck.integer(), { maxKeys: 8 }),
          FastCheck.dictionary(key, FastCheck.integer(), { minKeys: 15, maxKeys: 40 })
        ),
        (value) => canonicalJson(value) === reference(value)
      ),
      { numRuns: 1000 }
    )
  })

  it("hashes arguments as sha256 of the canonical text", () => {
    const args = { path: "notes/a.md", content: "ciao", options: { mode: 1 } }
    assert.strictEqual(argsHash(args), `sha256:${createHash("sha256").update(reference(args)).digest("hex")}`)
  })
})
