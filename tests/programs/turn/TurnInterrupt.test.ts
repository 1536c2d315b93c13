import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Schema, TestClock } from "effect"
import type { ActionStep } from "../../../src/domain/ExecutionTrace.js"
import { defineTool } from "../../../src/domain/Tool.js"
import { renderPrometheus } from "../../../src/http/Prometheus.js"
import { TestLayer } from "../../../src/layers/Test.js"
import { RecordedTraces } from "../../../src/layers/traces/TraceStoreMemory.js"
import { AgentRuntime } from "../../../src/services/AgentRuntime.js"
import { Metrics } from "../../../src/services/Metrics.js"
import { RunningTurns } from "../../../src/services/RunningTurns.js"
import { samplesOf } from "../../http/support.js"

/** A side-effecting tool that cannot be stopped once it starts: it takes a second and counts its runs. */
const makeStamp = () => {
  let runs = 0
  const started = Effect.runSync(Deferred.make<void>())
  const tool = defineTool({
    name: "stamp",
    description: "Stamps the ledger (takes a second, cannot be stopped).",
    parameters: Schema.Struct({ label: Schema.String }),
    hasSideEffects: true,
    external: false,
    execute: ({ label }) =>
      Effect.uninterruptible(
        Deferred.succeed(started, undefined).pipe(
          Effect.zipRight(Effect.sleep("1 second")),
          Effect.zipRight(Effect.sync(() => runs++)),
          Effect.as({ status: "success" as const, content: `stamped ${label}` })
        )
      )
  })
  return { tool, runs: () => runs, started: Deferred.await(started) }
}

const actions = (steps: ReadonlyArray<{ readonly kind: string }>) =>
  steps.filter((step): step is ActionStep => step.kind === "action")

describe("a turn interrupted while a tool runs", () => {
  const stamp = makeStamp()
  it.scoped("the tool that ran is in the trace, and the trace is user_aborted", () =>
    Effect.gen(function*() {
      const agent = yield* AgentRuntime
      const turn = yield* Effect.fork(agent.handle({ userMessage: "stamp it", sessionId: "s", channel: "cli:me" }))
      yield* stamp.started
      yield* TestClock.adjust("500 millis")
      yield* Fiber.interruptFork(turn)
      yield* TestClock.adjust("1 second")
      yield* Fiber.await(turn)
      const [trace] = yield* (yield* RecordedTraces).all
      assert.strictEqual(stamp.runs(), 1, "the tool ran once")
      assert.strictEqual(trace?.outcome, "user_aborted")
      const steps = actions(trace?.steps ?? [])
      assert.strictEqual(steps.length, 1, "the call that ran has its action step")
      assert.strictEqual(steps[0]!.tool_name, "stamp")
      assert.strictEqual(steps[0]!.policy_decision, "allow")
      assert.isNotNull(steps[0]!.exec_result)
      // The Thought that asked for it has its request's fingerprint: a stopped turn's trace has them all.
      const [thought] = (trace?.steps ?? []).filter((step) => step.kind === "thought")
      assert.strictEqual(thought?.kind === "thought" ? thought.request_hash?.message_count : undefined, 1)
    }).pipe(Effect.provide(TestLayer({
      tools: [stamp.tool],
      config: { policy: { rules: [{ match: "stamp", decision: "allow" }] } },
      script: [{ toolCalls: [{ name: "stamp", args: { label: "a" } }] }, { text: "done" }]
    }))))
})

/** A read-only tool that takes ten seconds (it can be stopped); `started` is done when it begins. */
const slowRead = (name: string, started: Deferred.Deferred<void>) =>
  defineTool({
    name,
    description: "Reads slowly.",
    parameters: Schema.Struct({}),
    hasSideEffects: false,
    external: false,
    execute: () =>
      Deferred.succeed(started, undefined).pipe(
        Effect.zipRight(Effect.sleep("10 seconds")),
        Effect.as({ status: "success" as const, content: "late" })
      )
  })

describe("a turn interrupted while tools that can be stopped run", () => {
  const first = Effect.runSync(Deferred.make<void>())
  const second = Effect.runSync(Deferred.make<void>())
  it.scoped("every call that started is recorded, in the model's order, as interrupted", () =>
    Effect.gen(function*() {
      const agent = yield* AgentRuntime
      const turn = yield* Effect.fork(agent.handle({ userMessage: "read both", sessionId: "s", channel: "cli:me" }))
      yield* Deferred.await(first)
      yield* Deferred.await(second)
      yield* Fiber.interrupt(turn)
      const [trace] = yield* (yield* RecordedTraces).all
      assert.strictEqual(trace?.outcome, "user_aborted")
      const steps = actions(trace?.steps ?? [])
      assert.deepStrictEqual(steps.map((step) => step.tool_name), ["read_a", "read_b"])
      for (const step of steps) {
        assert.strictEqual(step.exec_result?.status, "failed")
        assert.include(step.exec_result?.content ?? "", "interrupted")
      }
    }).pipe(Effect.provide(TestLayer({
      tools: [slowRead("read_a", first), slowRead("read_b", second)],
      script: [{ toolCalls: [{ name: "read_a", args: {} }, { name: "read_b", args: {} }] }, { text: "done" }]
    }))))
})

describe("a running turn is counted while it runs, and counted out however it ends", () => {
  const started = Effect.runSync(Deferred.make<void>())
  const wait = slowRead("wait", started)
  const active = Effect.map(
    Effect.flatMap(Metrics, (metrics) => metrics.scrape),
    (pairs) => samplesOf(renderPrometheus(pairs)).get("myclaw_active_sessions{channel=\"cli\"}") ?? 0
  )
  const running = Effect.flatMap(RunningTurns, (turns) => turns.count)

  it.scoped("in the active-sessions gauge and among the session's running turns; interrupted, in neither", () =>
    Effect.gen(function*() {
      const agent = yield* AgentRuntime
      const idle = yield* active
      const turn = yield* Effect.fork(agent.handle({ userMessage: "wait", sessionId: "s", channel: "cli:me" }))
      yield* Deferred.await(started)
      assert.strictEqual((yield* active) - idle, 1)
      assert.strictEqual(yield* running, 1)
      yield* Fiber.interrupt(turn)
      assert.strictEqual(yield* active, idle)
      assert.strictEqual(yield* running, 0)
      const [trace] = yield* (yield* RecordedTraces).all
      assert.strictEqual(trace?.outcome, "user_aborted")
    }).pipe(Effect.provide(TestLayer({
      tools: [wait],
      script: [{ toolCalls: [{ name: "wait", args: {} }] }, { text: "done" }]
    }))))

  it.scoped("and after a turn that ends normally", () =>
    Effect.gen(function*() {
      const agent = yield* AgentRuntime
      const idle = yield* active
      const trace = yield* agent.handle({ userMessage: "hi", sessionId: "s", channel: "cli:me" })
      assert.strictEqual(trace.outcome, "success")
      assert.strictEqual(yield* active, idle)
      assert.strictEqual(yield* running, 0)
    }).pipe(Effect.provide(TestLayer({ script: [{ text: "hello" }] }))))
})

/** A read-only tool written as an async function that waits until its signal is aborted; its signals, kept. */
const abortableRead = (name: string, started: Deferred.Deferred<void>, signals: Array<AbortSignal>) =>
  defineTool({
    name,
    description: "Reads until told to stop.",
    parameters: Schema.Struct({}),
    hasSideEffects: false,
    external: false,
    run: (_, { signal }) => {
      signals.push(signal)
      Effect.runSync(Deferred.succeed(started, undefined))
      return new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason)))
    }
  })

describe("tools written as async functions in a turn", () => {
  const first = Effect.runSync(Deferred.make<void>())
  const second = Effect.runSync(Deferred.make<void>())
  const signals: Array<AbortSignal> = []
  it.scoped("interrupting the turn aborts every running call's signal; each call is recorded as interrupted", () =>
    Effect.gen(function*() {
      const agent = yield* AgentRuntime
      const turn = yield* Effect.fork(agent.handle({ userMessage: "read both", sessionId: "s", channel: "cli:me" }))
      yield* Deferred.await(first)
      yield* Deferred.await(second)
      assert.deepStrictEqual(signals.map((signal) => signal.aborted), [false, false])
      yield* Fiber.interrupt(turn)
      assert.deepStrictEqual(signals.map((signal) => signal.aborted), [true, true])
      const [trace] = yield* (yield* RecordedTraces).all
      assert.strictEqual(trace?.outcome, "user_aborted")
      const steps = actions(trace?.steps ?? [])
      assert.deepStrictEqual(steps.map((step) => step.tool_name), ["read_a", "read_b"])
      for (const step of steps) assert.include(step.exec_result?.content ?? "", "interrupted")
    }).pipe(Effect.provide(TestLayer({
      tools: [abortableRead("read_a", first, signals), abortableRead("read_b", second, signals)],
      script: [{ toolCalls: [{ name: "read_a", args: {} }, { name: "read_b", args: {} }] }, { text: "done" }]
    }))))

  const late = Effect.runSync(Deferred.make<void>())
  const lateSignals: Array<AbortSignal> = []
  it.scoped("past timeouts.toolMs the model is told the call timed out and the turn goes on", () =>
    Effect.gen(function*() {
      const agent = yield* AgentRuntime
      const turn = yield* Effect.fork(agent.handle({ userMessage: "read", sessionId: "s", channel: "cli:me" }))
      yield* Deferred.await(late)
      yield* TestClock.adjust("1 second")
      const trace = yield* Fiber.join(turn)
      assert.strictEqual(trace.outcome, "success")
      assert.strictEqual(trace.final_response, "gave up")
      const [step] = actions(trace.steps)
      assert.deepStrictEqual(step?.exec_result, { status: "failed", content: "timed out after 1000 ms" })
      assert.isTrue(lateSignals[0]?.aborted)
    }).pipe(Effect.provide(TestLayer({
      tools: [abortableRead("read_slowly", late, lateSignals)],
      config: { timeouts: { llmMs: 60_000, toolMs: 1_000 } },
      script: [{ toolCalls: [{ name: "read_slowly", args: {} }] }, { text: "gave up" }]
    }))))
})

describe("a turn run where interruption is off", () => {
  const started = Effect.runSync(Deferred.make<void>())
  it.scoped("keeps it off in its loop: asked to stop, it runs to its end", () =>
    Effect.gen(function*() {
      const agent = yield* AgentRuntime
      const turn = yield* Effect.fork(
        Effect.uninterruptible(agent.handle({ userMessage: "read it", sessionId: "s", channel: "cli:me" }))
      )
      yield* Deferred.await(started)
      yield* Fiber.interruptFork(turn)
      yield* TestClock.adjust("10 seconds")
      const exit = yield* Fiber.await(turn)
      const [trace] = yield* (yield* RecordedTraces).all
      assert.strictEqual(trace?.outcome, "success")
      assert.strictEqual(trace?.final_response, "done")
      const steps = actions(trace?.steps ?? [])
      assert.deepStrictEqual(steps.map((step) => step.exec_result?.content), ["late"])
      // The interruption is the caller's to act on once the region ends.
      assert.isTrue(exit._tag === "Failure")
    }).pipe(Effect.provide(TestLayer({
      tools: [slowRead("read", started)],
      script: [{ toolCalls: [{ name: "read", args: {} }] }, { text: "done" }]
    }))))
})
