import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import * as NodeFs from "node:fs/promises"
import { createRequire } from "node:module"
import * as NodePath from "node:path"
import { TestLayer } from "../../../src/layers/Test.js"
import { AgentRuntime } from "../../../src/services/AgentRuntime.js"
import { Sessions } from "../../../src/services/Sessions.js"
import { recordingLlm } from "../../contract/fixtures.js"
import { recordingTracer } from "../../support/Tracing.js"

const Database = createRequire(import.meta.url)("better-sqlite3") as new(file: string) => {
  prepare: (sql: string) => { run: () => unknown; get: () => unknown }
  close: () => void
}

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

  it.scoped("a damaged stored turn is an error of the session's reads; the next turn fails with it and is still recorded", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const home = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-sessions-damaged-" })
      const run = <A, E>(self: Effect.Effect<A, E, AgentRuntime | Sessions>, script: ReadonlyArray<string>) =>
        Effect.scoped(Effect.provide(
          self,
          TestLayer({ home, llm: recordingLlm(script.map((text) => ({ text }))).layer, traceStore: "file" })
        ))
      yield* run(turn("first"), ["one"])
      const file = NodePath.join(home, ".state", "sessions.sqlite")
      const db = new Database(file)
      db.prepare("UPDATE session_turns SET tainted_by = '[not json' WHERE session_id = 's'").run()
      db.close()
      const read = yield* run(
        Effect.flatMap(Sessions, (sessions) => Effect.either(sessions.history("s", "cli:alice"))),
        []
      )
      assert.strictEqual(read._tag, "Left")
      if (read._tag === "Left") {
        assert.strictEqual(read.left.reason, "Io")
        assert.include(read.left.message, "cannot read the session")
      }
      // A turn of that session stops with the error in its trace, and is still recorded after the damaged one.
      const next = yield* run(turn("second"), ["two"])
      assert.strictEqual(next.outcome, "timeout_steps")
      assert.include(String(next.metadata["error"]), "cannot read the session")
      const check = new Database(file)
      const count = check.prepare("SELECT count(*) AS n FROM session_turns WHERE session_id = 's'")
      assert.deepStrictEqual(count.get(), { n: 2 })
      check.close()
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

  it.scoped("a summary stored under a tracer that exports is the span Sessions.addSummary", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const home = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-sessions-summary-span-" })
      const { spans, tracer } = yield* recordingTracer
      yield* Effect.scoped(
        Effect.gen(function*() {
          yield* turn("hello")
          const sessions = yield* Sessions
          yield* sessions.addSummary("s", { covers_through: 1, text: "They said hello.", at: 0, tainted_by: [] })
        }).pipe(Effect.provide(TestLayer({ home, sessions: "sqlite" })))
      ).pipe(Effect.withTracer(tracer))
      assert.include(spans.map((span) => span.name), "Sessions.addSummary")
    }).pipe(Effect.provide(NodeContext.layer)))
})
