import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, FiberId, Schema, TestClock } from "effect"
import type { ToolOutput } from "../../../src/domain/Tool.js"
import { defineTool } from "../../../src/domain/Tool.js"
import { TestLayer } from "../../../src/layers/Test.js"
import { AgentRuntime } from "../../../src/services/AgentRuntime.js"
import { recordingLlm } from "../../contract/fixtures.js"

/** A tool answering `output` (or never, once `started` is done, when undefined), counting its runs. */
const fixed = (name: string, output: ToolOutput | undefined, hasSideEffects = false) => {
  let runs = 0
  const started = Deferred.unsafeMake<void>(FiberId.none)
  const tool = defineTool({
    name,
    description: `answers ${output?.status ?? "never"}`,
    parameters: Schema.Struct({}),
    hasSideEffects,
    external: false,
    execute: () =>
      Effect.suspend(() => (runs++,
        output === undefined
          ? Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)
          : Effect.succeed(output))
      )
  })
  return { tool, runs: () => runs, started }
}

const toolMessages = (llm: ReturnType<typeof recordingLlm>) =>
  llm.requests.at(-1)!.messages.flatMap((message) => (message.role === "tool" ? [message.content] : []))

const turn = Effect.flatMap(
  AgentRuntime,
  (agent) => agent.handle({ userMessage: "go", sessionId: "s", channel: "cli:me" })
)

describe("tool statuses in what the loop tells the model", () => {
  it.scoped("success, empty, partial and failed each read differently", () => {
    const tools = [
      fixed("ok", { status: "success", content: "42" }),
      fixed("none", { status: "empty", content: "no match" }),
      fixed("half", { status: "partial", content: "1, 2, ...", note: "cut at 9 bytes" }),
      fixed("broken", { status: "failed", content: "disk error" }),
      fixed("send", { status: "failed", content: "SMTP 451" }, true)
    ]
    const llm = recordingLlm([
      { toolCalls: tools.map(({ tool }) => ({ name: tool.name, args: {} })) },
      { text: "done" }
    ])
    return Effect.gen(function*() {
      yield* turn
      assert.deepStrictEqual(toolMessages(llm), [
        "42",
        "Empty result: the tool ran and found nothing.\nno match",
        "Partial result: incomplete (cut at 9 bytes); do not take it for the whole, and say so if you rely on it." +
        "\n1, 2, ...",
        "Tool failed:\ndisk error",
        "Tool failed. This tool changes things and may have taken effect in part: do not retry it blindly; " +
        "check what happened first, or tell the owner.\nSMTP 451"
      ])
      assert.deepStrictEqual(tools.map(({ runs }) => runs()), [1, 1, 1, 1, 1], "nothing is retried")
    }).pipe(Effect.provide(TestLayer({
      llm: llm.layer,
      tools: tools.map(({ tool }) => tool),
      config: { policy: { rules: [{ match: "send", decision: "allow" }] } }
    })))
  })

  it.scoped("a side-effecting call that times out fails once and is not run again", () => {
    const stuck = fixed("stuck", undefined, true)
    const llm = recordingLlm([{ toolCalls: [{ name: "stuck", args: {} }] }, { text: "gave up" }])
    return Effect.gen(function*() {
      const fiber = yield* Effect.fork(turn)
      yield* Deferred.await(stuck.started)
      yield* TestClock.adjust("1 second")
      const trace = yield* Fiber.join(fiber)
      assert.strictEqual(trace.final_response, "gave up")
      assert.strictEqual(stuck.runs(), 1)
      const [message] = toolMessages(llm)
      assert.match(message!, /^Tool failed\. .*do not retry it blindly.*\n.*timed out after 1000 ms$/s)
    }).pipe(Effect.provide(TestLayer({
      llm: llm.layer,
      tools: [stuck.tool],
      config: { timeouts: { toolMs: 1000 }, policy: { rules: [{ match: "stuck", decision: "allow" }] } }
    })))
  })
})
