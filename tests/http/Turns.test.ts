import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel } from "effect"
import { decodeTrace, traceToJson } from "../../src/domain/ExecutionTrace.js"
import { makeAuditLogMemory } from "../../src/layers/audit/AuditLogMemory.js"
import type { TestOptions } from "../../src/layers/Test.js"
import { RecordedTraces } from "../../src/layers/traces/TraceStoreMemory.js"
import { AuditLog } from "../../src/services/AuditLog.js"
import { Loopback, postJson, serve, ServedGraph, TOKEN } from "./support.js"

const served = (options: TestOptions = { script: [{ text: "Hello!" }] }) =>
  Effect.provide(Layer.merge(ServedGraph(options), Loopback))

const jsonOf = (response: { readonly text: Effect.Effect<string, unknown> }) =>
  Effect.map(Effect.orDie(response.text), (text) => JSON.parse(text) as Record<string, unknown>)

describe("POST /v1/turns", () => {
  it.scoped("runs a turn and answers with the closed trace, byte for byte as `myclaw chat --json` encodes it", () =>
    Effect.gen(function*() {
      yield* serve()
      const body = { message: "hello", session_id: "s-http", channel: "http:alice" }
      const response = yield* postJson("/v1/turns", body, TOKEN)
      assert.strictEqual(response.status, 200)
      assert.match(response.headers["content-type"] ?? "", /^application\/json/)
      const text = yield* response.text
      const trace = yield* decodeTrace(JSON.parse(text))
      assert.strictEqual(trace.outcome, "success")
      assert.strictEqual(trace.final_response, "Hello!")
      assert.strictEqual(trace.session_id, "s-http")
      assert.strictEqual(trace.channel, "http:alice")
      assert.strictEqual(text, traceToJson(trace))
      const persisted = yield* (yield* RecordedTraces).all
      assert.deepStrictEqual(persisted.map((t) => t.trace_id), [trace.trace_id])
    }).pipe(served()))

  it.scoped("a turn that cannot be recorded is refused with 503 `unrecorded`, before any model is paid", () =>
    Effect.gen(function*() {
      yield* serve()
      const response = yield* postJson("/v1/turns", { message: "hello" }, TOKEN)
      assert.strictEqual(response.status, 503)
      const body = yield* jsonOf(response)
      assert.strictEqual(body.error, "unrecorded")
      assert.include(String(body.message), "the audit log cannot be written (no space left on device")
      const trace = yield* decodeTrace(body.trace)
      assert.strictEqual(trace.outcome, "policy_denied")
      assert.deepStrictEqual(trace.steps, [])
    }).pipe(
      served({ script: [{ text: "Hello!" }], audit: Layer.effect(AuditLog, makeAuditLogMemory({ fail: true })) }),
      Logger.withMinimumLogLevel(LogLevel.None)
    ))

  it.scoped("without session_id and channel: a fresh http session on the `http` channel", () =>
    Effect.gen(function*() {
      yield* serve()
      const response = yield* postJson("/v1/turns", { message: "hello" }, TOKEN)
      const trace = yield* decodeTrace(yield* jsonOf(response))
      assert.match(trace.session_id, /^http-[0-9a-f]{12}$/)
      assert.strictEqual(trace.channel, "http")
    }).pipe(served()))

  it.scoped("a malformed body gets 400 with the Schema error, and no turn runs", () =>
    Effect.gen(function*() {
      yield* serve()
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        ["{\"message\": ", "not valid JSON"],
        [{ msg: "hello" }, "message: is missing"],
        [{ message: 42 }, "message: expected a string, got 42"],
        [{ message: "   " }, "expected a non-empty message"],
        [{ message: "hi", session_id: "a b" }, "expected letters, digits"],
        [{ message: "hi", extra: true }, "extra: is not a known field"]
      ]
      for (const [body, expected] of cases) {
        const response = yield* postJson("/v1/turns", body, TOKEN)
        assert.strictEqual(response.status, 400, JSON.stringify(body))
        const json = yield* jsonOf(response)
        assert.strictEqual(json.error, "bad_request")
        assert.include(`${json.message}\n${json.details ?? ""}`, expected, JSON.stringify(body))
      }
      // An optional field that is present but wrong is reported once, for what it is, not also as "not undefined".
      const optional = yield* jsonOf(yield* postJson("/v1/turns", { message: "hi", channel: "" }, TOKEN))
      assert.deepStrictEqual(optional.details, ["channel: expected letters, digits and . _ : @ - (at most 64)"])
      assert.strictEqual((yield* (yield* RecordedTraces).all).length, 0)
    }).pipe(served()))

  it.scoped("a body that starts with a UTF-8 byte order mark (some clients write one) is read as JSON", () =>
    Effect.gen(function*() {
      yield* serve()
      const response = yield* postJson("/v1/turns", "\uFEFF{\"message\": \"hello\"}", TOKEN)
      assert.strictEqual(response.status, 200)
      assert.strictEqual((yield* decodeTrace(yield* jsonOf(response))).user_message, "hello")
    }).pipe(served()))

  it.scoped("a missing or wrong token gets 401 and no turn runs; the token never appears in the answer", () =>
    Effect.gen(function*() {
      yield* serve()
      for (const token of [undefined, "wrong", `${TOKEN}x`]) {
        const response = yield* postJson("/v1/turns", { message: "hello" }, token)
        assert.strictEqual(response.status, 401)
        assert.strictEqual(response.headers["www-authenticate"], "Bearer realm=\"myclaw\"")
        assert.notInclude(yield* response.text, TOKEN)
      }
      assert.strictEqual((yield* (yield* RecordedTraces).all).length, 0)
    }).pipe(served()))

  it.scoped("when MYCLAW_ADMIN_TOKEN is not set the endpoint is off: 403, whatever the request says", () =>
    Effect.gen(function*() {
      yield* serve(null)
      const response = yield* postJson("/v1/turns", { message: "hello" }, TOKEN)
      assert.strictEqual(response.status, 403)
      assert.include(String((yield* jsonOf(response)).message), "MYCLAW_ADMIN_TOKEN is not set")
      assert.strictEqual((yield* (yield* RecordedTraces).all).length, 0)
    }).pipe(served()))
})
