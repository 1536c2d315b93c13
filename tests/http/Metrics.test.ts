import { HttpClient, HttpClientRequest } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, Layer, TestClock } from "effect"
import type { ActionStep, ExecutionTrace, ThoughtStep } from "../../src/domain/ExecutionTrace.js"
import { renderPrometheus } from "../../src/http/Prometheus.js"
import { MetricsLive } from "../../src/layers/MetricsLive.js"
import { TestLayer, type TestOptions } from "../../src/layers/Test.js"
import type { ApprovalRequest } from "../../src/services/Approvals.js"
import { Budget } from "../../src/services/Budget.js"
import { Metrics } from "../../src/services/Metrics.js"
import {
  get,
  Loopback,
  postJson,
  promtoolCheck,
  promtoolPath,
  samplesOf,
  serve,
  ServedGraph,
  TOKEN
} from "./support.js"

const families: ReadonlyArray<readonly [string, string]> = [
  ["myclaw_traces_total", "counter"],
  ["myclaw_cost_eur_today", "gauge"],
  ["myclaw_trace_latency_ms", "summary"],
  ["myclaw_active_sessions", "gauge"],
  ["myclaw_budget_remaining_eur", "gauge"],
  ["myclaw_tool_calls_total", "counter"],
  ["myclaw_approvals_total", "counter"],
  ["myclaw_llm_tier_calls_total", "counter"],
  ["myclaw_llm_call_duration_seconds", "histogram"],
  ["process_start_time_seconds", "gauge"],
  ["process_resident_memory_bytes", "gauge"]
]

const write = (path: string) => ({ toolCalls: [{ name: "fs_write", args: { path, content: "x" } }] })
const usage = { input: 1000, output: 0 }
/** Six turns, one script: success (a tool), hallucination, denial, refusal, success after approval, refusal. */
const script = [
  { toolCalls: [{ name: "fs_list", args: { path: "." } }], usage },
  { text: "Four files.", usage },
  { toolCalls: [{ name: "rm_rf", args: {} }] },
  { toolCalls: [{ name: "fs_read", args: {} }] },
  write("SOUL.md"),
  write("notes/no.md"),
  write("notes/yes.md"),
  { text: "Saved." },
  write("notes/no-again.md")
]
const approve = (request: ApprovalRequest) => request.target === "notes/yes.md"
const options: TestOptions = {
  script,
  approve,
  config: { pricing: { scripted: { inputPerMTok: 100, cachedInputPerMTok: 0, outputPerMTok: 0 } } }
}

const served = Effect.provide(Layer.merge(ServedGraph(options), Loopback))

const scrape = Effect.flatMap(
  get("/metrics", TOKEN),
  (response) => Effect.map(response.text, (text) => ({ response, text }))
)

describe("GET /metrics", () => {
  it.scoped("the required families after scripted turns, with the right values (deltas: the registry is global)", () =>
    Effect.gen(function*() {
      yield* serve()
      const before = samplesOf((yield* scrape).text)
      for (const message of ["list", "hallucinate", "constitution", "no", "yes", "no again"]) {
        const response = yield* postJson("/v1/turns", { message, channel: "http:owner" }, TOKEN)
        assert.strictEqual(response.status, 200)
      }
      const { response, text } = yield* scrape
      assert.strictEqual(response.status, 200)
      assert.match(response.headers["content-type"] ?? "", /^text\/plain; version=0\.0\.4/)
      for (const [name, type] of families) {
        assert.strictEqual(text.split(`# TYPE ${name} ${type}\n`).length, 2, `one TYPE line for ${name}`)
        assert.strictEqual(text.split(`# HELP ${name} `).length, 2, `one HELP line for ${name}`)
      }
      const after = samplesOf(text)
      const delta = (series: string) => after.get(series)! - (before.get(series) ?? 0)
      assert.deepStrictEqual(
        Object.fromEntries(
          ["success", "tool_hallucination", "policy_denied", "user_aborted", "budget_hit", "timeout_steps"].map((
            outcome
          ) => [outcome, delta(`myclaw_traces_total{outcome="${outcome}"}`)])
        ),
        { success: 2, tool_hallucination: 1, policy_denied: 1, user_aborted: 2, budget_hit: 0, timeout_steps: 0 }
      )
      assert.strictEqual(delta("myclaw_tool_calls_total{tool=\"fs_list\"}"), 1)
      assert.strictEqual(delta("myclaw_tool_calls_total{tool=\"fs_read\"}"), 1)
      assert.strictEqual(delta("myclaw_tool_calls_total{tool=\"fs_write\"}"), 4)
      assert.isFalse([...after.keys()].some((series) => series.includes("rm_rf")), "a hallucinated tool is no label")
      assert.strictEqual(delta("myclaw_approvals_total{verdict=\"granted\",via=\"explicit\"}"), 1)
      assert.strictEqual(delta("myclaw_approvals_total{verdict=\"granted\",via=\"batch\"}"), 0)
      assert.strictEqual(delta("myclaw_approvals_total{verdict=\"denied\",via=\"explicit\"}"), 2)
      assert.strictEqual(delta("myclaw_approvals_total{verdict=\"timeout\",via=\"timeout\"}"), 0)
      assert.isFalse(
        [...after.keys()].some((series) => series.startsWith("myclaw_approvals_total{") && !series.includes("via=")),
        "every approvals series says how it came about"
      )
      assert.strictEqual(delta("myclaw_llm_tier_calls_total{tier=\"frontier\"}"), 9)
      assert.strictEqual(delta("myclaw_llm_tier_calls_total{tier=\"local-fast\"}"), 0)
      assert.strictEqual(delta("myclaw_llm_call_duration_seconds_count{tier=\"frontier\"}"), 9)
      assert.strictEqual(delta("myclaw_trace_latency_ms_count"), 6)
      for (const q of ["0.5", "0.95", "0.99"]) assert.isTrue(after.has(`myclaw_trace_latency_ms{quantile="${q}"}`))
      assert.strictEqual(after.get("myclaw_active_sessions{channel=\"http\"}"), 0)
      const status = yield* (yield* Budget).status
      assert.isAbove(status.spentEur, 0)
      assert.strictEqual(after.get("myclaw_cost_eur_today"), status.spentEur)
      assert.strictEqual(after.get("myclaw_budget_remaining_eur{cap=\"soft\"}"), status.softCapEur - status.spentEur)
      assert.strictEqual(after.get("myclaw_budget_remaining_eur{cap=\"hard\"}"), status.hardCapEur - status.spentEur)
      assert.isAbove(after.get("process_resident_memory_bytes")!, 0)
      assert.closeTo(after.get("process_start_time_seconds")!, Date.now() / 1000 - process.uptime(), 5)
    }).pipe(served))

  it.scoped.skipIf(promtoolPath === undefined)(
    "promtool check metrics: parses, and the only lint finding is the contract's own name (`_ms`)",
    () =>
      Effect.gen(function*() {
        yield* serve()
        yield* postJson("/v1/turns", { message: "list" }, TOKEN)
        const check = yield* promtoolCheck((yield* scrape).text)
        assert.notStrictEqual(check.code, 1, check.stderr)
        assert.deepStrictEqual(check.problems, [
          "myclaw_trace_latency_ms metric names should not contain abbreviated units"
        ])
      }).pipe(served)
  )

  it.scoped("401 without a token or with a wrong one; 403 when no token is configured", () =>
    Effect.gen(function*() {
      yield* serve()
      for (const token of [undefined, "nope"]) {
        const response = yield* get("/metrics", token)
        assert.strictEqual(response.status, 401)
        assert.notInclude(yield* response.text, "myclaw_traces_total")
      }
      const basic = yield* HttpClient.execute(
        HttpClientRequest.get("/metrics").pipe(HttpClientRequest.basicAuth("admin", TOKEN))
      )
      assert.strictEqual(basic.status, 401)
    }).pipe(served))

  it.scoped("403 when MYCLAW_ADMIN_TOKEN is not set, with the reason", () =>
    Effect.gen(function*() {
      yield* serve(null)
      const response = yield* get("/metrics", TOKEN)
      assert.strictEqual(response.status, 403)
      assert.include(yield* response.text, "MYCLAW_ADMIN_TOKEN is not set")
    }).pipe(served))
})

const thought = (tier: ThoughtStep["tier"], wallMs: number): ThoughtStep => ({
  kind: "thought",
  model: "m",
  provider: "p",
  tier,
  prompt_tokens: 0,
  cached_tokens: 0,
  response_tokens: 0,
  finish_reason: "stop",
  text: "",
  tool_call: null,
  tool_calls: [],
  cost_usd: 0,
  wall_ms: wallMs,
  failed_attempts: []
})
const action = (tool: string, approval: ActionStep["approval"]): ActionStep => ({
  kind: "action",
  tool_call_id: "c",
  tool_name: tool,
  args: {},
  validation: "ok",
  validation_error: null,
  policy_decision: "approve_required",
  policy_reason: null,
  approval,
  exec_result: null,
  error: null,
  wall_ms: 0
})
const trace = (
  wallMs: number,
  steps: ExecutionTrace["steps"],
  metadata: Record<string, unknown> = {}
): ExecutionTrace => ({
  trace_id: "t",
  session_id: "s",
  channel: "telegram:@owner",
  started_at: DateTime.unsafeMake(0),
  finished_at: DateTime.unsafeMake(wallMs),
  user_message: "m",
  steps,
  final_response: null,
  cost_usd: 0,
  wall_time_ms: wallMs,
  outcome: "success",
  metadata
})

describe("Metrics service", () => {
  const metrics = Effect.provide(MetricsLive.pipe(Layer.provideMerge(TestLayer({}))))
  const exposition = Effect.flatMap(Metrics, (m) => m.scrape).pipe(
    Effect.map((pairs) => pairs.map((p) => p.metricKey.name))
  )

  it.scoped("traceClosed: latency sum and count, LLM latency per tier, approvals by verdict and via", () =>
    Effect.gen(function*() {
      const service = yield* Metrics
      const read = service.scrape
      const before = samplesOf(renderPrometheus(yield* read))
      yield* service.traceClosed(trace(1200, [
        thought("local-fast", 300),
        action("fs_write", { granted: true, via: "batch", reason: "window" }),
        action("fs_write", { granted: true, via: "session", reason: "session grant" }),
        thought("frontier", 2500)
      ]))
      yield* service.traceClosed(trace(800, [
        action("fs_write", { granted: false, via: "non_interactive", reason: "" }),
        action("shell_run", { granted: false, via: "timeout", reason: "no answer in 5 minutes" })
      ]))
      const after = samplesOf(renderPrometheus(yield* read))
      const delta = (series: string) => after.get(series)! - (before.get(series) ?? 0)
      assert.strictEqual(delta("myclaw_trace_latency_ms_sum"), 2000)
      assert.strictEqual(delta("myclaw_trace_latency_ms_count"), 2)
      assert.strictEqual(delta("myclaw_llm_call_duration_seconds_sum{tier=\"local-fast\"}"), 0.3)
      assert.strictEqual(delta("myclaw_llm_call_duration_seconds_bucket{tier=\"frontier\",le=\"2.5\"}"), 1)
      assert.strictEqual(delta("myclaw_llm_call_duration_seconds_bucket{tier=\"frontier\",le=\"1\"}"), 0)
      assert.strictEqual(delta("myclaw_approvals_total{verdict=\"granted\",via=\"batch\"}"), 1)
      assert.strictEqual(delta("myclaw_approvals_total{verdict=\"granted\",via=\"session\"}"), 1)
      assert.strictEqual(delta("myclaw_approvals_total{verdict=\"denied\",via=\"non_interactive\"}"), 1)
      assert.strictEqual(delta("myclaw_approvals_total{verdict=\"timeout\",via=\"timeout\"}"), 1)
      assert.strictEqual(delta("myclaw_tool_calls_total{tool=\"fs_write\"}"), 3)
      const p50 = after.get("myclaw_trace_latency_ms{quantile=\"0.5\"}")!
      const p99 = after.get("myclaw_trace_latency_ms{quantile=\"0.99\"}")!
      assert.isAtMost(p50, p99)
    }).pipe(metrics))

  it.scoped("turnStarted/turnEnded move active sessions per channel kind; every counter exists from the start", () =>
    Effect.gen(function*() {
      const service = yield* Metrics
      const gauge = Effect.map(
        service.scrape,
        (pairs) => samplesOf(renderPrometheus(pairs)).get("myclaw_active_sessions{channel=\"telegram\"}")!
      )
      const idle = yield* gauge
      yield* service.turnStarted("telegram:@alice")
      yield* service.turnStarted("telegram:@bob")
      assert.strictEqual((yield* gauge) - idle, 2)
      yield* service.turnEnded("telegram:@alice")
      assert.strictEqual((yield* gauge) - idle, 1)
      yield* service.turnEnded("telegram:@bob")
      assert.strictEqual(yield* gauge, idle)
      const names = yield* exposition
      for (const [name] of families) assert.include(names, name)
      assert.isFalse(names.some((name) => name.startsWith("effect_")), "Effect's own fiber metrics stay out")
    }).pipe(metrics))

  it.scoped("errors: a trace that ended in an error and errorObserved count for an hour", () =>
    Effect.gen(function*() {
      const service = yield* Metrics
      const start = yield* service.recentErrors
      yield* service.traceClosed(trace(10, [], { error: "boom" }))
      yield* service.errorObserved
      assert.strictEqual((yield* service.recentErrors) - start, 2)
      yield* TestClock.adjust("61 minutes")
      assert.strictEqual(yield* service.recentErrors, 0)
    }).pipe(metrics))
})
