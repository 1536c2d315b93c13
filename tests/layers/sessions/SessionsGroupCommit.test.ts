import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { Statement } from "@effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Ref } from "effect"
import * as NodePath from "node:path"
import { IdGeneratorLive } from "../../../src/layers/ids/IdGeneratorLive.js"
import { SessionsSqliteAt } from "../../../src/layers/sessions/SessionsSqlite.js"
import { Sessions } from "../../../src/services/Sessions.js"
import { turnOf } from "../../contract/SessionsContract.js"

describe("Sessions in SQLite: turns that close together", () => {
  it.scoped("share a statement; when one of them is refused, the others are still recorded", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-sessions-batch-" })
      const recordings = yield* Ref.make(0)
      // The writer fiber is forked while the layer is built: it inherits this counter of the statements that record
      // turns.
      const counting = Statement.withTransformer((statement) =>
        Effect.as(
          statement.compile()[0].startsWith("INSERT INTO session_turn_records")
            ? Ref.update(recordings, (n) => n + 1)
            : Effect.void,
          statement
        )
      )
      // Forked one after the other by this fiber, they all offer their turn before the writer next runs.
      const atOnce = (turns: ReadonlyArray<ReturnType<typeof turnOf>>) =>
        Effect.flatMap(Sessions, (sessions) =>
          Effect.flatMap(
            Effect.forEach(turns, (turn) => Effect.fork(Effect.either(sessions.recordTurn(turn)))),
            (fibers) =>
              Effect.forEach(fibers, (fiber) =>
                Effect.map(Fiber.join(fiber), (outcome) =>
                  outcome._tag === "Left" ? outcome.left.reason : "ok"))
          ))
      const layer = SessionsSqliteAt(NodePath.join(dir, "sessions.sqlite"), "batch").pipe(
        Layer.provide(IdGeneratorLive)
      )
      yield* counting(
        Effect.gen(function*() {
          const sessions = yield* Sessions
          yield* sessions.recordTurn(turnOf("s1", 1))
          assert.strictEqual(yield* Ref.getAndSet(recordings, 0), 1)

          const together = yield* atOnce([turnOf("s2", 2), turnOf("s3", 3), turnOf("s1", 4), turnOf("s4", 5)])
          assert.deepStrictEqual(together, ["ok", "ok", "ok", "ok"])
          // Those queued while the writer was busy go in one statement (how many that is depends on the scheduler).
          assert.isBelow(yield* Ref.getAndSet(recordings, 0), 4, "turns closing together share a statement")

          // Whichever of these share a statement, the refused turn fails alone.
          const refused = yield* atOnce([
            turnOf("s2", 6),
            turnOf("s3", 7),
            turnOf("s1", 8, { owner: "telegram:@mallory" }),
            turnOf("s4", 9)
          ])
          assert.deepStrictEqual(refused, ["ok", "ok", "Forbidden", "ok"])

          const traces = (sessionId: string) =>
            Effect.map(
              sessions.history(sessionId, "cli:alice"),
              (history) => history.turns.map((turn) => [turn.seq, turn.trace_id])
            )
          assert.deepStrictEqual(yield* traces("s1"), [[1, "trace-1"], [2, "trace-4"]])
          assert.deepStrictEqual(yield* traces("s2"), [[1, "trace-2"], [2, "trace-6"]])
          assert.deepStrictEqual(yield* traces("s3"), [[1, "trace-3"], [2, "trace-7"]])
          assert.deepStrictEqual(yield* traces("s4"), [[1, "trace-5"], [2, "trace-9"]])
        }).pipe(Effect.provide(layer))
      )
    }).pipe(Effect.provide(NodeContext.layer)))
})
