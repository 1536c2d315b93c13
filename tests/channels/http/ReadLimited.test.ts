import { HttpServerRequest } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { readLimited } from "../../../src/channels/http/Turns.js"

// Node's requests are read from their events (the HTTP tests, on a real server, cover them); any other request
// through its stream, with the same limit.
const webRequest = (body: string) =>
  HttpServerRequest.fromWeb(new Request("http://127.0.0.1/v1/turns", { method: "POST", body }))

describe("readLimited, for a request that is not Node's", () => {
  it.effect("the body as text up to the limit, none beyond it", () =>
    Effect.gen(function*() {
      const text = "{\"message\":\"café 東京\"}"
      const bytes = new TextEncoder().encode(text).length
      assert.deepStrictEqual(yield* readLimited(webRequest(text), bytes), Option.some(text))
      assert.deepStrictEqual(yield* readLimited(webRequest(text), bytes - 1), Option.none())
      assert.deepStrictEqual(yield* readLimited(webRequest(""), 10), Option.some(""))
    }))
})
