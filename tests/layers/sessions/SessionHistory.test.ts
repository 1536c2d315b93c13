import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { TestLayer } from "../../../src/layers/Test.js"
import { AgentRuntime } from "../../../src/services/AgentRuntime.js"
import { recordingLlm } from "../../contract/fixtures.js"

const turn = (userMessage: string, sessionId = "s", channel = "cli:alice") =>
  Effect.flatMap(AgentRuntime, (runtime) => runtime.handle({ userMessage, sessionId, channel }))

describe("Session history", () => {
  it.scoped("survives a restart and a month boundary, with the trace files gone", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const home = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-sessions-history-" })
      const before = recordingLlm([{ text: "Noted: blue." }])
      yield* TestClock.setTime(Date.parse("2026-01-31T23:50:00Z"))
      yield* Effect.scoped(
        turn("my colour is blue").pipe(Effect.provide(TestLayer({ home, llm: before.layer, traceStore: "file" })))
      )
      // Nothing of the traces is read back for the history: without them it is the same.
      yield* Effect.promise(() => NodeFs.rm(NodePath.join(home, ".audit", "traces"), { recursive: true }))
      yield* Effect.promise(() => NodeFs.mkdir(NodePath.join(home, ".audit", "traces")))
      yield* TestClock.setTime(Date.parse("2026-03-02T09:00:00Z"))
      const after = recordingLlm([{ text: "Blue." }])
      const trace = yield* Effect.scoped(
        turn("which colour?").pipe(Effect.provide(TestLayer({ home, llm: after.layer, traceStore: "file" })))
      )
      assert.strictEqual(trace.outcome, "success")
      assert.deepStrictEqual(after.requests[0]!.messages, [
        { role: "user", content: "my colour is blue" },
        { role: "assistant", content: "Noted: blue.", toolCalls: [] },
        { role: "user", content: "which colour?" }
      ])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a session of another owner is refused: its history is not shown to the model", () => {
    const llm = recordingLlm([{ text: "Noted." }, { text: "should not be asked" }])
    return Effect.gen(function*() {
      yield* turn("the code is 1234", "s", "telegram:@alice")
      const refused = yield* turn("what is the code?", "s", "http:mallory")
      assert.strictEqual(refused.outcome, "policy_denied")
      assert.include(refused.final_response ?? "", "belongs to another owner")
      assert.strictEqual(llm.requests.length, 1)
      const again = yield* turn("and now?", "s", "telegram:@alice")
      assert.strictEqual(again.outcome, "success")
      assert.deepStrictEqual(llm.requests[1]!.messages.map((message) => message.content), [
        "the code is 1234",
        "Noted.",
        "and now?"
      ])
    }).pipe(Effect.provide(TestLayer({ llm: llm.layer, traceStore: "file" })))
  })
})
