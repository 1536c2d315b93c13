import { assert, describe, it } from "@effect/vitest"
import { Effect, FiberRef, HashMap, Logger, Schema } from "effect"
import { defineTool } from "../../../src/domain/Tool.js"
import { TestLayer } from "../../../src/layers/Test.js"
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
})
