import { assert, describe, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { createHash } from "node:crypto"
import { sha256Hex, sha256HexPrefix } from "../../src/domain/Sha256.js"

describe("sha256Hex", () => {
  it("is the hex SHA-256 of the text as UTF-8, or of the bytes", () => {
    assert.strictEqual(sha256Hex("ciao è"), createHash("sha256").update("ciao è", "utf8").digest("hex"))
    const bytes = new Uint8Array([0, 255, 7])
    assert.strictEqual(sha256Hex(bytes), createHash("sha256").update(bytes).digest("hex"))
  })
})

describe("sha256HexPrefix", () => {
  it("gives the first digits of the hex SHA-256, for every length up to all 64", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.oneof(FastCheck.string({ unit: "binary" }), FastCheck.uint8Array()),
        FastCheck.integer({ min: 0, max: 70 }),
        (data, digits) => sha256HexPrefix(data, digits) === sha256Hex(data).slice(0, digits)
      ),
      { numRuns: 2000 }
    )
  })
})
