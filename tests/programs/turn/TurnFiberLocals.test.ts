import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, FiberRef, HashMap, Logger, Schema, TestClock } from "effect"
import type { ActionStep } from "../../../src/domain/ExecutionTrace.js"
import { defineTool } from "../../../src/domain/Tool.js"
import { TestLayer } from "../../../src/layers/Test.js"
import { type TurnProgress, TurnProgressListener } from "../../../src/programs/turn/Progress.js"
import { AgentRuntime } from "../../../src/services/AgentRuntime.js"
import { DrawnIds } from "../../../src/services/IdGenerator.js"

/** A tool that logs one line, and the annotations each logged line carried. */
const makeLogging = () => {
  const lines: Array<{ readonly message: string; readonly annotations: Record<string, unknown> }> = []
  const logger = Logger.make(({ annotations, message }) => {
    lines.push({ message: String(message), annotations: Object.fromEntries(HashMap.toEntries(annotations)) })
  })
  const tool = defineTool({
    name: "note",
    description: "Logs a line.",
    parameters: Schema.Struct({}),
    hasSideEffects: false,
    external: false,
    execute: () => Effect.as(Effect.logInfo("inside the tool"), { status: "success" as const, content: "noted" })
  })
  return { lines, logger, tool }
}

describe("a turn's fiber-local settings", () => {
  const logging = makeLogging()
  it.scoped("its logs carry its trace and session ids, its ids are drawn into its trace, and both are put back after", () =>
    Effect.gen(function*() {
      const agent = yield* AgentRuntime
      const outer = HashMap.make(["request", "r-1"])
      const [trace, after] = yield* Effect.locally(
        Effect.gen(function*() {
          const trace = yield* agent.handle({ userMessage: "note it", sessionId: "s-7", channel: "cli:me" })
          yield* Effect.logInfo("after the turn")
          return [trace, yield* FiberRef.get(DrawnIds)] as const
        }),
        FiberRef.currentLogAnnotations,
        outer
      )
      const inside = logging.lines.find((line) => line.message === "inside the tool")
      assert.deepStrictEqual(inside?.annotations, { request: "r-1", trace_id: trace.trace_id, session_id: "s-7" })
      const outside = logging.lines.find((line) => line.message === "after the turn")
      assert.deepStrictEqual(outside?.annotations, { request: "r-1" })
      // The first id the turn draws is its own trace id; the caller's log of drawn ids is untouched.
      assert.deepStrictEqual(trace.replay?.ids[0], { kind: "trace", id: trace.trace_id })
      assert.isNull(after)
    }).pipe(
      Effect.provide(Logger.replace(Logger.defaultLogger, logging.logger)),
      Effect.provide(TestLayer({
        tools: [logging.tool],
        script: [{ toolCalls: [{ name: "note", args: {} }] }, { text: "done" }]
      }))
    ))

  const progress = makeLogging()
  it.scoped("a channel's progress listener hears each step and each call; a slow one is not counted in the call's time", () =>
    Effect.gen(function*() {
      const agent = yield* AgentRuntime
      const heard: Array<TurnProgress> = []
      const toolHeard = yield* Deferred.make<void>()
      const listener = (event: TurnProgress) =>
        Effect.sync(() => heard.push(event)).pipe(
          Effect.zipRight(
            event._tag === "Tool"
              ? Effect.zipRight(Deferred.succeed(toolHeard, undefined), Effect.sleep("5 seconds"))
              : Effect.void
          )
        )
      const turn = yield* Effect.fork(
        Effect.locally(
          agent.handle({ userMessage: "note it", sessionId: "s-8", channel: "cli:me" }),
          TurnProgressListener,
          listener
        )
      )
      yield* Deferred.await(toolHeard)
      yield* TestClock.adjust("5 seconds")
      const trace = yield* Fiber.join(turn)
      assert.deepStrictEqual(
        heard.map((event) =>
          event._tag === "Step"
            ? `step ${event.step}`
            : event._tag === "Tool"
            ? `tool ${event.name}`
            : `closed ${event.trace.trace_id === trace.trace_id}`
        ),
        [
          "step 1",
          "tool note",
          "step 2",
          "closed true"
        ]
      )
      const action = trace.steps.find((step): step is ActionStep => step.kind === "action")
      assert.strictEqual(action?.exec_result?.status, "success")
      assert.strictEqual(action?.wall_ms, 0, "the listener's 5 s are not the call's")
      assert.strictEqual(trace.final_response, "done")
    }).pipe(
      Effect.provide(TestLayer({
        tools: [progress.tool],
        script: [{ toolCalls: [{ name: "note", args: {} }] }, { text: "done" }]
      }))
    ))
})
