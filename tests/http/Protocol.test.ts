import { HttpClient, HttpClientRequest, HttpRouter, HttpServer, HttpServerResponse } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option, Stream } from "effect"
import * as NodeNet from "node:net"
import { decodeTrace } from "../../src/domain/ExecutionTrace.js"
import { serveApp } from "../../src/http/Server.js"
import type { TestOptions } from "../../src/layers/Test.js"
import { RecordedTraces } from "../../src/layers/traces/TraceStoreMemory.js"
import { Budget } from "../../src/services/Budget.js"
import { turnsUntil } from "../support/EventLoop.js"
import { recordingTracer } from "../support/Tracing.js"
import { get, Loopback, postJson, serve, ServedGraph, TOKEN } from "./support.js"

const served = (options: TestOptions = { script: [{ text: "Hello!" }, { text: "Again!" }] }) =>
  Effect.provide(Layer.merge(ServedGraph(options), Loopback))

/** The server and the client are in this process, but some of their I/O completes on Node's I/O threads. */
const eventually = (done: Effect.Effect<boolean>) => turnsUntil(done, 200_000)

const jsonOf = (response: { readonly text: Effect.Effect<string, unknown> }) =>
  Effect.map(Effect.orDie(response.text), (text) => JSON.parse(text) as Record<string, unknown>)

const request = (method: "GET" | "PUT" | "DELETE" | "PATCH", path: string) =>
  HttpClient.execute(HttpClientRequest.make(method)(path).pipe(HttpClientRequest.bearerToken(TOKEN)))

describe("the HTTP protocol around the routes", () => {
  it.scoped("a body over 1 MiB gets 413 with the limit, and no turn runs", () =>
    Effect.gen(function*() {
      yield* serve()
      const response = yield* postJson("/v1/turns", { message: "x".repeat(1_100_000) }, TOKEN)
      assert.strictEqual(response.status, 413)
      const json = yield* jsonOf(response)
      assert.strictEqual(json.error, "payload_too_large")
      assert.strictEqual(json.max_bytes, 1_048_576)
      // Without a Content-Length (chunked), the body is counted as it comes, and drained.
      const chunk = new TextEncoder().encode("x".repeat(65_536))
      const chunked = yield* HttpClient.execute(
        HttpClientRequest.post("/v1/turns").pipe(
          HttpClientRequest.bodyStream(Stream.make(...Array.from({ length: 20 }, () => chunk)), {
            contentType: "application/json"
          }),
          HttpClientRequest.bearerToken(TOKEN)
        )
      )
      assert.strictEqual(chunked.status, 413)
      assert.strictEqual((yield* (yield* RecordedTraces).all).length, 0)
    }).pipe(served()))

  it.scoped("a known path with another method gets 405 and Allow; an unknown path a JSON 404", () =>
    Effect.gen(function*() {
      yield* serve()
      for (
        const [method, path, allow] of [
          ["GET", "/v1/turns", "POST"],
          ["DELETE", "/v1/turns", "POST"],
          ["PUT", "/health", "GET"],
          ["PATCH", "/v1/approvals", "GET"]
        ] as const
      ) {
        const response = yield* request(method, path)
        assert.strictEqual(response.status, 405, `${method} ${path}`)
        assert.strictEqual(response.headers["allow"], allow)
        assert.deepInclude(yield* jsonOf(response), { error: "method_not_allowed" })
      }
      const missing = yield* get("/v2/nothing", TOKEN)
      assert.strictEqual(missing.status, 404)
      assert.match(missing.headers["content-type"] ?? "", /^application\/json/)
      assert.deepInclude(yield* jsonOf(missing), { error: "not_found" })
    }).pipe(served()))

  it.scoped("a body that is not declared JSON gets 415, even when it parses as JSON", () =>
    Effect.gen(function*() {
      yield* serve()
      const response = yield* HttpClient.execute(
        HttpClientRequest.post("/v1/turns").pipe(
          HttpClientRequest.bodyText(JSON.stringify({ message: "hello" }), "text/plain"),
          HttpClientRequest.bearerToken(TOKEN)
        )
      )
      assert.strictEqual(response.status, 415)
      assert.deepInclude(yield* jsonOf(response), { error: "unsupported_media_type" })
      assert.strictEqual((yield* (yield* RecordedTraces).all).length, 0)
    }).pipe(served()))

  it.scoped("an HTTP caller cannot pose as another channel: its channel is always http or http:<name>", () =>
    Effect.gen(function*() {
      yield* serve()
      const channels: Array<string> = []
      for (const channel of ["cli", "http:alice"]) {
        const response = yield* postJson("/v1/turns", { message: "hi", channel }, TOKEN)
        assert.strictEqual(response.status, 200)
        channels.push((yield* decodeTrace(yield* jsonOf(response))).channel)
      }
      assert.deepStrictEqual(channels, ["http:cli", "http:alice"])
    }).pipe(served()))

  it.scoped("a 400 names each problem by its field in plain words, without Schema's type names", () =>
    Effect.gen(function*() {
      yield* serve()
      const response = yield* postJson("/v1/turns", { message: 42, extra: true }, TOKEN)
      assert.strictEqual(response.status, 400)
      const json = yield* jsonOf(response)
      assert.deepStrictEqual((json.details as Array<string>).sort(), [
        "extra: is not a known field",
        "message: expected a string, got 42"
      ])
      assert.notMatch(JSON.stringify(json.details), /readonly|└─|Refinement|Transformation|\{ /)
    }).pipe(served()))

  it.scoped("/health, open to anyone, shows neither absolute paths nor the process id", () =>
    Effect.gen(function*() {
      yield* serve()
      const text = yield* Effect.orDie((yield* get("/health")).text)
      const report = JSON.parse(text) as Record<string, unknown>
      assert.notProperty(report, "pid")
      assert.notInclude(text, String(process.pid))
      assert.notMatch(text, /"\/[^"]*\//, "an absolute path")
    }).pipe(served()))

  it.scoped("a client that disconnects mid-turn ends the turn user_aborted and its budget reservation", () =>
    Effect.gen(function*() {
      yield* serve()
      const budget = yield* Budget
      const client = yield* Effect.fork(postJson("/v1/turns", { message: "slow one" }, TOKEN))
      yield* eventually(Effect.map(budget.status, (status) => status.reservedEur > 0))
      assert.isAbove((yield* budget.status).reservedEur, 0, "the turn never reached its model call")
      yield* Fiber.interrupt(client)
      const traces = yield* RecordedTraces
      yield* eventually(Effect.map(traces.all, (all) => all.length > 0))
      assert.deepStrictEqual((yield* traces.all).map((trace) => trace.outcome), ["user_aborted"])
      const status = yield* budget.status
      assert.strictEqual(status.reservedEur, 0, "the interrupted call still holds its reservation")
      assert.isAbove(status.spentEur, 0, "an interrupted call counts at its maximum")
    }).pipe(served({
      script: [{ text: "late", delayMs: 60_000 }],
      config: { pricing: { scripted: { inputPerMTok: 1, cachedInputPerMTok: 0, outputPerMTok: 1 } } }
    })))

  it.scoped("a body whose characters are split across chunks arrives whole", () =>
    Effect.gen(function*() {
      yield* serve()
      const bytes = new TextEncoder().encode(JSON.stringify({ message: "café, naïve — 東京 🙂" }))
      // Chunks of 3 bytes: most multi-byte characters are cut between two of them.
      const chunks = Array.from({ length: Math.ceil(bytes.length / 3) }, (_, i) => bytes.subarray(i * 3, i * 3 + 3))
      const response = yield* HttpClient.execute(
        HttpClientRequest.post("/v1/turns").pipe(
          HttpClientRequest.bodyStream(Stream.fromIterable(chunks), { contentType: "application/json" }),
          HttpClientRequest.bearerToken(TOKEN)
        )
      )
      assert.strictEqual(response.status, 200)
      const [trace] = yield* (yield* RecordedTraces).all
      assert.strictEqual(trace?.user_message, "café, naïve — 東京 🙂")
    }).pipe(served()))

  it.scoped("a client that goes away in the middle of its body runs no turn, and the server goes on answering", () =>
    Effect.gen(function*() {
      yield* serve()
      const server = yield* HttpServer.HttpServer
      const port = server.address._tag === "TcpAddress" ? server.address.port : 0
      // Headers that announce 1,000 bytes, 10 of them sent, then the connection closed.
      yield* Effect.async<void>((resume) => {
        const socket = NodeNet.connect(port, "127.0.0.1", () => {
          socket.write(
            `POST /v1/turns HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\n` +
              "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"message\"",
            () => {
              socket.destroy()
              resume(Effect.void)
            }
          )
        })
      })
      const answered = yield* postJson("/v1/turns", { message: "after the one that left" }, TOKEN)
      assert.strictEqual(answered.status, 200)
      const traces = yield* (yield* RecordedTraces).all
      assert.deepStrictEqual(traces.map((trace) => trace.user_message), ["after the one that left"])
    }).pipe(served()))

  // A route that answers with the name of the span it runs under.
  const spanRoute = HttpRouter.empty.pipe(
    HttpRouter.get(
      "/span",
      Effect.map(
        Effect.option(Effect.currentSpan),
        (span) => HttpServerResponse.text(Option.match(span, { onNone: () => "none", onSome: (span) => span.name }))
      )
    )
  )
  const spanOfRequest = Effect.flatMap(get("/span"), (response) => response.text)

  it.scoped("under the default tracer (nothing exports spans) a request makes no server span", () =>
    Effect.gen(function*() {
      yield* serveApp(spanRoute)
      assert.strictEqual(yield* spanOfRequest, "none")
    }).pipe(Effect.provide(Loopback)))

  it.scoped("under a tracer that exports, each request runs under the server's span", () =>
    Effect.gen(function*() {
      const { tracer } = yield* recordingTracer
      yield* Effect.withTracer(serveApp(spanRoute), tracer)
      assert.strictEqual(yield* spanOfRequest, "http.server GET")
    }).pipe(Effect.provide(Loopback)))
})
