import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Either, FastCheck as fc, Schema } from "effect"
import { ExecutionTrace } from "../../src/domain/ExecutionTrace.js"
import { ListedFields, listingOf, plainListing } from "../../src/domain/TraceListing.js"
import { mutated } from "../support/Mutations.js"

/** A trace's line as the store holds it: its JSON, parsed. */
const lineOf = (trace: ExecutionTrace): Record<string, unknown> =>
  JSON.parse(JSON.stringify(Schema.encodeSync(ExecutionTrace)(trace))) as Record<string, unknown>

/** The listing decoding the line's listed fields gives, or undefined when they do not decode. */
const decodedListing = (json: unknown) => {
  const decoded = Schema.decodeUnknownEither(ListedFields)(json)
  return Either.isRight(decoded) ? listingOf(decoded.right, "2026-12.jsonl", 7, 9) : undefined
}

// Fixed seeds: the same traces on every run (a failure names its seed and path to replay it).
describe("plainListing", () => {
  it("lists every trace line as decoding its listed fields does, without decoding them", () => {
    fc.assert(
      fc.property(Arbitrary.make(ExecutionTrace), (trace) => {
        const line = lineOf(trace)
        const plain = plainListing(line, "2026-12.jsonl", 7, 9)
        assert.isDefined(plain, JSON.stringify(line))
        assert.deepStrictEqual(plain, decodedListing(line))
      }),
      { numRuns: 100, seed: 12 }
    )
  })

  it("gives a listing only where decoding gives the same one", () => {
    let plain = 0
    let declined = 0
    fc.assert(
      fc.property(
        Arbitrary.make(ExecutionTrace).chain((trace) => mutated(lineOf(trace))),
        (line) => {
          const listing = plainListing(line, "2026-12.jsonl", 7, 9)
          if (listing === undefined) return void declined++
          plain++
          assert.deepStrictEqual(listing, decodedListing(line))
        }
      ),
      { numRuns: 1000, seed: 12 }
    )
    // Both sides are exercised: most changes leave the listed fields plain (an unlisted field), some do not.
    assert.isAbove(plain, 0)
    assert.isAbove(declined, 0)
  })

  it("reads a start as decoding does: any instant Date reads, given back in ISO form; none otherwise", () => {
    const line = lineOf(fc.sample(Arbitrary.make(ExecutionTrace), { numRuns: 1, seed: 12 })[0]!)
    for (const start of ["2026-12-05T17:31:37Z", "2026-12-05", "2026-12-05T18:31:37.5+01:00"]) {
      const listing = plainListing({ ...line, started_at: start }, "2026-12.jsonl", 7, 9)
      assert.strictEqual(listing?.started_at, new Date(start).toISOString())
      assert.deepStrictEqual(listing, decodedListing({ ...line, started_at: start }))
    }
    assert.isUndefined(plainListing({ ...line, started_at: "yesterday" }, "2026-12.jsonl", 7, 9))
    assert.isUndefined(decodedListing({ ...line, started_at: "yesterday" }))
  })
})
