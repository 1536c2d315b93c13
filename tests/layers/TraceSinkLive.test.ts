import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodePath from "node:path"
import { LlmFunction } from "../../src/layers/llm/LlmScripted.js"
import { TestLayer } from "../../src/layers/Test.js"
import { AgentRuntime } from "../../src/services/AgentRuntime.js"
import { Sessions } from "../../src/services/Sessions.js"
import { clientOn } from "../support/Sqlite.js"

const turnsOf = (sessionId: string) =>
  Effect.flatMap(
    Sessions,
    (sessions) =>
      Effect.map(sessions.history(sessionId, "cli:alice"), (history) =>
        history.turns.map((turn) => [turn.seq, turn.trace_id]))
  )

describe("TraceSinkLive at start", () => {
  it.scoped("turns whose records a stopped process had not written come back from their traces, forgotten ones do not", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const home = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-recover-" })
      const myclaw = () => TestLayer({ home, traceStore: "file", llm: LlmFunction(() => ({ text: "ok" })) })
      const [first, second, other] = yield* Effect.scoped(Effect.gen(function*() {
        const runtime = yield* AgentRuntime
        const ask = (userMessage: string, sessionId: string) =>
          runtime.handle({ userMessage, sessionId, channel: "cli:alice" })
        const turns = [yield* ask("one", "s1"), yield* ask("two", "s1"), yield* ask("three", "s2")]
        yield* ask("four", "s3")
        yield* Effect.flatMap(Sessions, (sessions) => sessions.forget("s3"))
        return turns
      })).pipe(Effect.provide(myclaw()))
      // What a process that stopped before writing them leaves: the traces, without their records.
      yield* Effect.scoped(
        Effect.flatMap(
          clientOn(NodePath.join(home, ".state", "sessions.sqlite")),
          (db) => db`DELETE FROM session_turns WHERE trace_id IN (${second!.trace_id}, ${other!.trace_id})`
        )
      )

      yield* Effect.scoped(Effect.gen(function*() {
        assert.deepStrictEqual(yield* turnsOf("s1"), [[1, first!.trace_id], [2, second!.trace_id]])
        assert.deepStrictEqual(yield* turnsOf("s2"), [[1, other!.trace_id]])
        assert.deepStrictEqual(yield* turnsOf("s3"), [], "a forgotten session stays empty")
      })).pipe(Effect.provide(myclaw()))
      // Once back, they are not added twice.
      yield* Effect.scoped(Effect.gen(function*() {
        assert.deepStrictEqual(yield* turnsOf("s1"), [[1, first!.trace_id], [2, second!.trace_id]])
        assert.deepStrictEqual(yield* turnsOf("s2"), [[1, other!.trace_id]])
      })).pipe(Effect.provide(myclaw()))
    }).pipe(Effect.provide(NodeContext.layer)))
})
