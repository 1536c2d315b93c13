import { HttpClient, HttpClientRequest } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, TestClock } from "effect"
import type { TestOptions } from "../../src/layers/Test.js"
import { RecordedTraces } from "../../src/layers/traces/TraceStoreMemory.js"
import { Budget } from "../../src/services/Budget.js"
import { turnsUntil } from "../support/EventLoop.js"
import { Loopback, serve, ServedGraph, TOKEN } from "./support.js"

const served = (options: TestOptions) => Effect.provide(Layer.merge(ServedGraph(options), Loopback))

const post = (body: Record<string, unknown>, key?: string) =>
  HttpClient.execute(
    HttpClientRequest.post("/v1/turns").pipe(
      HttpClientRequest.bodyText(JSON.stringify(body), "application/json"),
      HttpClientRequest.bearerToken(TOKEN),
      key === undefined ? (request) => request : HttpClientRequest.setHeader("idempotency-key", key)
    )
  ).pipe(
    Effect.flatMap((response) =>
      Effect.map(response.text, (text) => ({ status: response.status, headers: response.headers, text }))
    ),
    Effect.orDie
  )

const outcomes = Effect.flatMap(RecordedTraces, (traces) => traces.all).pipe(
  Effect.map((all) => all.map((trace) => trace.outcome))
)

describe("POST /v1/turns with an Idempotency-Key", () => {
  it.scoped("a retry with the same key gets the first answer and runs nothing; another request with it is refused", () =>
    Effect.gen(function*() {
      yield* serve()
      const first = yield* post({ message: "add milk to the list", session_id: "s-1" }, "\"4f0c-a1\"")
      assert.strictEqual(first.status, 200)
      assert.isUndefined(first.headers["idempotent-replayed"])
      const retry = yield* post({ message: "add milk to the list", session_id: "s-1" }, "\"4f0c-a1\"")
      assert.strictEqual(retry.status, 200)
      assert.strictEqual(retry.text, first.text, "the same trace, byte for byte")
      assert.strictEqual(retry.headers["idempotent-replayed"], "true")
      // The key in its bare form is the same key.
      assert.strictEqual(
        (yield* post({ message: "add milk to the list", session_id: "s-1" }, "4f0c-a1")).text,
        first.text
      )
      assert.deepStrictEqual(yield* outcomes, ["success"])
      const reused = yield* post({ message: "add eggs to the list", session_id: "s-1" }, "4f0c-a1")
      assert.strictEqual(reused.status, 422)
      assert.include(JSON.parse(reused.text), { error: "idempotency_key_reused" })
      assert.deepStrictEqual(yield* outcomes, ["success"])
      // Keys are the caller's: another channel's key of the same name is another request.
      const other = yield* post({ message: "add milk to the list", session_id: "s-phone", channel: "phone" }, "4f0c-a1")
      assert.strictEqual(JSON.parse(other.text).final_response, "Added, on the phone.")
      assert.strictEqual((yield* outcomes).length, 2)
      // Without a key, every request is a turn.
      const again = yield* post({ message: "add milk to the list", session_id: "s-1" })
      assert.strictEqual(JSON.parse(again.text).final_response, "Added again.")
      assert.strictEqual((yield* outcomes).length, 3)
    }).pipe(served({ script: [{ text: "Added." }, { text: "Added, on the phone." }, { text: "Added again." }] })))

  it.scoped("two requests with one key at once run one turn, and both get its answer", () =>
    Effect.gen(function*() {
      yield* serve()
      const body = { message: "plan my day", session_id: "s-3" }
      const both = yield* Effect.fork(Effect.all([post(body, "day-1"), post(body, "day-1")], { concurrency: 2 }))
      // Both requests reach the server (or the first has ended and the second is a replay: one turn either way).
      yield* turnsUntil(Effect.succeed(false), 2_000)
      yield* TestClock.adjust("21 seconds")
      const [a, b] = yield* Fiber.join(both)
      assert.deepStrictEqual([a.status, b.status], [200, 200])
      assert.strictEqual(a.text, b.text)
      assert.deepStrictEqual(yield* outcomes, ["success"])
    }).pipe(served({ script: [{ text: "Your day.", delayMs: 20_000 }, { text: "A second day." }] })))

  it.scoped("a key that is not 1 to 255 visible ASCII characters is a 400 naming the header, and runs nothing", () =>
    Effect.gen(function*() {
      yield* serve()
      for (const key of ["\"\"", "x".repeat(256), "clé-1", "\"a\"b\""]) {
        const response = yield* post({ message: "hi" }, key)
        assert.strictEqual(response.status, 400, key)
        assert.include(JSON.parse(response.text).message, "Idempotency-Key")
      }
      assert.deepStrictEqual(yield* outcomes, [])
    }).pipe(served({ script: [] })))

  it.scoped("a client that goes away does not end a turn sent with a key: its retry waits for it and gets the answer", () =>
    Effect.gen(function*() {
      yield* serve()
      const budget = yield* Budget
      const body = { message: "summarise the week", session_id: "s-2" }
      const client = yield* Effect.fork(post(body, "week-49"))
      yield* turnsUntil(Effect.map(budget.status, (status) => status.reservedEur > 0), 200_000)
      yield* Fiber.interrupt(client)
      const retry = yield* Effect.fork(post(body, "week-49"))
      yield* TestClock.adjust("21 seconds")
      const answer = yield* Fiber.join(retry)
      assert.strictEqual(answer.status, 200)
      assert.strictEqual(answer.headers["idempotent-replayed"], "true")
      assert.strictEqual(JSON.parse(answer.text).final_response, "The week was quiet.")
      assert.deepStrictEqual(yield* outcomes, ["success"], "the turn ran once, to its end")
    }).pipe(served({
      script: [{ text: "The week was quiet.", delayMs: 20_000 }],
      config: { pricing: { scripted: { inputPerMTok: 1, cachedInputPerMTok: 0, outputPerMTok: 1 } } }
    })))
})
