import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeIdGeneratorLive, uuidFrom } from "../../../src/layers/ids/IdGeneratorLive.js"

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe("IdGeneratorLive", () => {
  it("a UUID is its 16 bytes in hex, with the version and variant bits set", () => {
    const bytes = Buffer.from([0xaa, 0, 1, 2, 3, 4, 5, 0xff, 7, 0xff, 9, 10, 11, 12, 13, 14, 0xfe])
    const into = Buffer.alloc(36)
    assert.strictEqual(uuidFrom(bytes, 1, into), "00010203-0405-4f07-bf09-0a0b0c0d0efe")
    assert.strictEqual(uuidFrom(Buffer.alloc(16), 0, into), "00000000-0000-4000-8000-000000000000")
    assert.throws(() => uuidFrom(bytes, 2, into), /out of range/, "past the bytes given")
  })

  it.effect("trace ids are random version 4 UUIDs, each a string of its own", () =>
    Effect.gen(function*() {
      const ids = yield* makeIdGeneratorLive
      // More than a pool of random bytes holds: the pool is refilled on the way.
      const drawn = yield* Effect.forEach(Array.from({ length: 600 }), () => ids.next("trace"))
      for (const id of drawn) assert.match(id, UUID_V4)
      assert.strictEqual(new Set(drawn).size, drawn.length)
      const other = yield* ids.next("wrapper")
      assert.match(other, /^[0-9a-f]{16}$/)
    }))
})
