import { assert, describe, it } from "@effect/vitest"
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

  it("refuses a number JSON cannot write", () => {
    assert.throws(() => sealLine({ kind: "x", cost: Number.NaN }, { seq: 1, prev: "p", epoch: 1 }, key), /no JSON form/)
  })
})
