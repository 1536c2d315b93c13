import { NodeHttpClient } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { OtlpTracer, TelemetryLive } from "../../src/layers/Telemetry.js"
import { AgentRuntime } from "../../src/services/AgentRuntime.js"
import { Loopback, postJson, serve, ServedGraph, TOKEN } from "../http/support.js"
import { localServer, type ReceivedRequest } from "../support/LocalServer.js"

interface ExportedSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: Record<string, unknown> }>
  readonly status: { readonly code: number; readonly message?: string }
}

/** A collector on 127.0.0.1 that accepts every export. */
const collector = localServer(Array.from({ length: 50 }, () => ({ status: 200, body: {} })))

const spansOf = (requests: ReadonlyArray<ReceivedRequest>): ReadonlyArray<ExportedSpan> =>
  requests.filter((request) => request.path === "/v1/traces").flatMap((request) =>
    (JSON.parse(request.body) as {
      resourceSpans: ReadonlyArray<{ scopeSpans: ReadonlyArray<{ spans: ReadonlyArray<ExportedSpan> }> }>
    }).resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans))
  )

const attribute = (span: ExportedSpan | undefined, key: string) => {
  const value = span?.attributes.find((a) => a.key === key)?.value
  return value === undefined ? undefined : Object.values(value)[0]
}
const byName = (spans: ReadonlyArray<ExportedSpan>, name: string) => spans.filter((span) => span.name === name)

const tracing = (url: string) =>
  OtlpTracer({ url: `${url}/v1/traces`, serviceName: "myclaw-test" }).pipe(Layer.provide(NodeHttpClient.layerUndici))

/** What the lead is asked to add in Thought.ts and Actions.ts, standing in until then. */
const fakeTurn = Effect.gen(function*() {
  yield* Effect.annotateCurrentSpan({ trace_id: "t-1", session_id: "s-1" })
  yield* Effect.void.pipe(Effect.withSpan("Turn.thought", {
    attributes: {
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "gpt-test",
      "gen_ai.usage.input_tokens": 1200,
      "gen_ai.usage.output_tokens": 80
    }
  }))
  yield* Effect.void.pipe(Effect.withSpan("Turn.action", {
    attributes: { "gen_ai.tool.name": "fs_write", "myclaw.policy.decision": "approve_required" }
  }))
  yield* Effect.fail("denied").pipe(
    Effect.withSpan("Turn.action", {
      attributes: { "gen_ai.tool.name": "fs_write", "myclaw.policy.decision": "deny" }
    }),
    Effect.ignore
  )
}).pipe(Effect.withSpan("Turn.run"))

describe("Telemetry (OTLP/HTTP JSON)", () => {
  it.scoped("spans reach a collector on loopback with their parent/child structure and GenAI attributes", () =>
    Effect.gen(function*() {
      const { requests, url } = yield* collector
      yield* Effect.scoped(Effect.provide(fakeTurn, tracing(url)))
      const received = requests.filter((request) => request.path === "/v1/traces")
      assert.isAbove(received.length, 0)
      assert.match(String(received[0]!.headers["content-type"]), /^application\/json/)
      const body = JSON.parse(received[0]!.body)
      assert.deepInclude(body.resourceSpans[0].resource.attributes, {
        key: "service.name",
        value: { stringValue: "myclaw-test" }
      })
      const spans = spansOf(requests)
      const [turn] = byName(spans, "Turn.run")
      const [thought] = byName(spans, "Turn.thought")
      const actions = byName(spans, "Turn.action")
      assert.isUndefined(turn!.parentSpanId)
      assert.match(turn!.traceId, /^[0-9a-f]{32}$/)
      assert.match(turn!.spanId, /^[0-9a-f]{16}$/)
      for (const child of [thought!, ...actions]) {
        assert.strictEqual(child.parentSpanId, turn!.spanId)
        assert.strictEqual(child.traceId, turn!.traceId)
      }
      assert.strictEqual(actions.length, 2)
      assert.strictEqual(attribute(turn, "trace_id"), "t-1")
      assert.strictEqual(attribute(thought, "gen_ai.request.model"), "gpt-test")
      assert.strictEqual(attribute(thought, "gen_ai.usage.input_tokens"), 1200)
      assert.strictEqual(attribute(thought, "gen_ai.usage.output_tokens"), 80)
      const denied = actions.find((span) => attribute(span, "myclaw.policy.decision") === "deny")!
      assert.strictEqual(denied.status.code, 2)
      assert.strictEqual(attribute(denied, "gen_ai.tool.name"), "fs_write")
    }))

  it.scoped("a real turn through POST /v1/turns: http.server, then Turn.run under it, then the turn's spans", () =>
    Effect.gen(function*() {
      const { requests, url } = yield* collector
      yield* Effect.scoped(
        Effect.gen(function*() {
          yield* serve()
          const response = yield* postJson("/v1/turns", { message: "list", session_id: "s-otel" }, TOKEN)
          assert.strictEqual(response.status, 200)
        }).pipe(Effect.provide(Layer.merge(
          ServedGraph({ script: [{ toolCalls: [{ name: "fs_list", args: { path: "." } }] }, { text: "Four files." }] }),
          Loopback
        )))
      ).pipe(Effect.provide(tracing(url)))
      const spans = spansOf(requests)
      const [turn] = byName(spans, "Turn.run")
      assert.isDefined(turn, spans.map((span) => span.name).join(", "))
      assert.strictEqual(attribute(turn, "session_id"), "s-otel")
      const server = spans.find((span) => span.spanId === turn!.parentSpanId)
      assert.strictEqual(server?.name, "http.server POST")
      assert.strictEqual(server?.kind, 2)
      const [prompt] = byName(spans, "PromptBuilder.build")
      assert.strictEqual(prompt?.parentSpanId, turn!.spanId)
      const [closed] = byName(spans, "Metrics.traceClosed")
      assert.strictEqual(closed?.traceId, turn!.traceId)
      const inTurn = spans.filter((span) => span.traceId === turn!.traceId)
      const ids = new Set(inTurn.map((span) => span.spanId))
      for (const span of inTurn) {
        if (span.parentSpanId !== undefined && span !== server) assert.isTrue(ids.has(span.parentSpanId), span.name)
      }
    }))

  it.scoped("a real turn from the AgentRuntime (TestLayer): Turn.run is the root, its children point to it", () =>
    Effect.gen(function*() {
      const { requests, url } = yield* collector
      yield* Effect.scoped(
        Effect.flatMap(
          AgentRuntime,
          (runtime) => runtime.handle({ userMessage: "hi", sessionId: "s-rt", channel: "cli:owner" })
        ).pipe(
          Effect.provide(ServedGraph({ script: [{ text: "Hello!" }] })),
          Effect.provide(tracing(url))
        )
      )
      const spans = spansOf(requests)
      const [turn] = byName(spans, "Turn.run")
      assert.isUndefined(turn!.parentSpanId)
      assert.strictEqual(attribute(turn, "session_id"), "s-rt")
      for (const span of spans.filter((s) => s.traceId === turn!.traceId && s !== turn)) {
        assert.isDefined(span.parentSpanId, span.name)
      }
      assert.strictEqual(byName(spans, "PromptBuilder.build")[0]?.parentSpanId, turn!.spanId)
    }))

  it.scoped("a real turn with a tool call: its Thought and Action spans are exported, children of Turn.run", () =>
    Effect.gen(function*() {
      const { requests, url } = yield* collector
      yield* Effect.scoped(
        Effect.flatMap(
          AgentRuntime,
          (runtime) => runtime.handle({ userMessage: "list", sessionId: "s-spans", channel: "cli:owner" })
        ).pipe(
          Effect.provide(
            ServedGraph({
              script: [{ toolCalls: [{ name: "fs_list", args: { path: "." } }] }, { text: "Four files." }]
            })
          ),
          Effect.provide(tracing(url))
        )
      )
      const spans = spansOf(requests)
      const [turn] = byName(spans, "Turn.run")
      assert.isDefined(turn, spans.map((span) => span.name).join(", "))
      assert.strictEqual(attribute(turn, "session_id"), "s-spans")
      const thoughts = byName(spans, "Turn.thought")
      const actions = byName(spans, "Turn.action")
      assert.strictEqual(thoughts.length, 2)
      assert.strictEqual(actions.length, 1)
      for (const child of [...thoughts, ...actions]) {
        assert.strictEqual(child.parentSpanId, turn!.spanId, child.name)
        assert.strictEqual(child.traceId, turn!.traceId, child.name)
      }
      assert.strictEqual(attribute(thoughts[0], "gen_ai.operation.name"), "chat")
      assert.isDefined(attribute(thoughts[0], "gen_ai.usage.input_tokens"))
      assert.strictEqual(attribute(actions[0], "gen_ai.tool.name"), "fs_list")
      assert.strictEqual(attribute(actions[0], "myclaw.policy.decision"), "allow")
      assert.strictEqual(attribute(actions[0], "myclaw.tool.status"), "success")
    }))

  it.scoped("TelemetryLive: OTEL_EXPORTER_OTLP_ENDPOINT exports to <endpoint>/v1/traces with the headers", () =>
    Effect.gen(function*() {
      const { requests, url } = yield* collector
      const env = ConfigProvider.fromMap(
        new Map([
          ["OTEL_EXPORTER_OTLP_ENDPOINT", `${url}/`],
          ["OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=s3cr%3Dt,x-team=home"],
          ["OTEL_SERVICE_NAME", "myclaw-env"]
        ])
      )
      yield* Effect.scoped(Effect.provide(fakeTurn, TelemetryLive.pipe(Layer.provide(Layer.setConfigProvider(env)))))
      const received = requests.filter((request) => request.path === "/v1/traces")
      assert.isAbove(received.length, 0)
      assert.strictEqual(received[0]!.headers["x-api-key"], "s3cr=t")
      assert.strictEqual(received[0]!.headers["x-team"], "home")
      assert.strictEqual(byName(spansOf(requests), "Turn.thought").length, 1)
    }))

  it.scoped("TelemetryLive without an endpoint: the default tracer stays, nothing is exported", () =>
    Effect.gen(function*() {
      const before = yield* Effect.tracer
      const env = ConfigProvider.fromMap(new Map())
      const telemetry = TelemetryLive.pipe(Layer.provide(Layer.setConfigProvider(env)))
      const during = yield* Effect.tracer.pipe(Effect.provide(telemetry))
      assert.strictEqual(during, before)
    }))
})
