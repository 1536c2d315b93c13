import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { hmac, openLine, sealLine } from "../../../src/layers/audit/Seal.js"

const key = new Uint8Array(32).fill(7)

describe("a sealed audit line", () => {
  it("is the record's fields in their order, then seq, prev and epoch, then the signature of all that", () => {
    const line = sealLine(
      { kind: "turn_summary", at: "2026-12-03T05:00:00.000Z", trace_id: "t-1", steps: 3, meta: { b: 1, a: 2 } },
      { seq: 12, prev: "ab".repeat(32), epoch: 20_425 },
      key
    )
    const unsigned = `{"kind":"turn_summary","at":"2026-12-03T05:00:00.000Z","trace_id":"t-1","steps":3,` +
      `"meta":{"b":1,"a":2},"seq":12,"prev":"${"ab".repeat(32)}","epoch":20425}`
    assert.strictEqual(line, `${unsigned.slice(0, -1)},"sig":"${hmac(key, "record", unsigned)}"}`)
    const opened = openLine(Buffer.from(line))
    assert.strictEqual(opened?.unsigned.toString(), unsigned)
    assert.strictEqual(opened?.sig, hmac(key, "record", unsigned))
  })

  it("gives fields that already carry a seal their new values in place, as re-sealing a record read back does", () => {
    const line = sealLine(
      { seq: 1, kind: "checkpoint", prev: "old", epoch: 1, count: 100 },
      { seq: 2, prev: "new", epoch: 5 },
      key,
      "checkpoint"
    )
    const unsigned = `{"seq":2,"kind":"checkpoint","prev":"new","epoch":5,"count":100}`
    assert.strictEqual(line, `${unsigned.slice(0, -1)},"sig":"${hmac(key, "checkpoint", unsigned)}"}`)
  })

  it("keeps a field named __proto__ as a field, on either way of sealing", () => {
    // Such a key can only come from parsed JSON (a record read back, data a record carries): JSON.parse makes it
    // an own field, and the line must hold it where the record has it, whether or not the record needs merging.
    const seal = { seq: 2, prev: "p", epoch: 3 }
    const plain = JSON.parse(`{"kind":"x","__proto__":{"a":1}}`) as object
    const unsignedPlain = `{"kind":"x","__proto__":{"a":1},"seq":2,"prev":"p","epoch":3}`
    assert.strictEqual(
      sealLine(plain, seal, key),
      `${unsignedPlain.slice(0, -1)},"sig":"${hmac(key, "record", unsignedPlain)}"}`
    )
    const resealed = JSON.parse(`{"seq":1,"__proto__":0,"kind":"x","prev":"old","epoch":1}`) as object
    const unsignedResealed = `{"seq":2,"__proto__":0,"kind":"x","prev":"p","epoch":3}`
    assert.strictEqual(
      sealLine(resealed, seal, key),
      `${unsignedResealed.slice(0, -1)},"sig":"${hmac(key, "record", unsignedResealed)}"}`
    )
  })

  it("refuses a number JSON cannot write, wherever it is", () => {
    const seal = { seq: 1, prev: "p", epoch: 1 }
    assert.throws(() => sealLine({ kind: "x", cost: Number.NaN }, seal, key), /NaN has no JSON form/)
    assert.throws(
      () => sealLine({ kind: "x", calls: [{ ms: 1 }, { ms: Infinity }] }, seal, key),
      /Infinity has no JSON/
    )
    assert.throws(() => sealLine({ kind: "x", meta: { deep: [[-Infinity]] } }, seal, key), /-Infinity has no JSON/)
    assert.throws(() => sealLine({ kind: "x", at: { toJSON: () => Number.NaN } }, seal, key), /NaN has no JSON form/)
    assert.throws(
      () => sealLine({ kind: "x", at: { toJSON: () => [{ toJSON: () => Infinity }] } }, seal, key),
      /Infinity/
    )
    assert.throws(() => sealLine({ kind: "x" }, { ...seal, epoch: Number.NaN }, key), /NaN has no JSON form/)
  })

  it("writes what JSON writes for everything else: nulls, nested arrays, toJSON, no undefined fields", () => {
    const fields = {
      kind: "x",
      none: null,
      gone: undefined,
      list: [1, null, [2.5, "a"], { b: false }],
      at: new Date(Date.UTC(2026, 11, 3)),
      amount: { toJSON: () => "12.50 EUR" },
      // What toJSON returns is written as it is, its own toJSON not called.
      price: { toJSON: () => ({ eur: 2, toJSON: () => Number.NaN }) }
    }
    const line = sealLine(fields, { seq: 3, prev: "p", epoch: 2 }, key)
    const unsigned = `{"kind":"x","none":null,"list":[1,null,[2.5,"a"],{"b":false}],` +
      `"at":"2026-12-03T00:00:00.000Z","amount":"12.50 EUR","price":{"eur":2},"seq":3,"prev":"p","epoch":2}`
    assert.strictEqual(line, `${unsigned.slice(0, -1)},"sig":"${hmac(key, "record", unsigned)}"}`)
  })

  // A number JSON cannot write, anywhere JSON.stringify looks (these values have no toJSON).
  const nonFinite = (v: unknown): boolean =>
    typeof v === "number"
      ? !Number.isFinite(v)
      : Array.isArray(v)
      ? v.some(nonFinite)
      : typeof v === "object" && v !== null && Object.values(v).some(nonFinite)

  it("is, for any record, what JSON.stringify writes of the record and its seal merged into one object", () => {
    // Records of any JSON-like values (nulls, nested objects and arrays, numbers JSON cannot write, keys that are
    // the seal's), each line compared with the merged object's JSON, or both refused.
    const value = fc.letrec((tie) => ({
      leaf: fc.oneof(fc.string(), fc.double(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(undefined)),
      tree: fc.oneof(
        { depthSize: "small" },
        tie("leaf"),
        fc.array(tie("tree")),
        fc.dictionary(fc.string(), tie("tree"))
      )
    })).tree
    const record = fc.dictionary(fc.oneof(fc.string(), fc.constantFrom("seq", "prev", "epoch", "kind")), value)
    const seal = fc.record({ seq: fc.nat(), prev: fc.string(), epoch: fc.oneof(fc.nat(), fc.constant(Number.NaN)) })
    fc.assert(
      fc.property(record, seal, (fields, sealed) => {
        // A spread copies every field as a field, `__proto__` too (fast-check makes such keys).
        const merged = { ...fields, ...sealed }
        const unsigned = JSON.stringify(merged)
        const writable = !nonFinite(merged)
        if (!writable) {
          assert.throws(() => sealLine(fields, sealed, key), /has no JSON form/)
          return
        }
        assert.strictEqual(
          sealLine(fields, sealed, key),
          `${unsigned.slice(0, -1)},"sig":"${hmac(key, "record", unsigned)}"}`
        )
      }),
      { numRuns: 1000 }
    )
  })
})
