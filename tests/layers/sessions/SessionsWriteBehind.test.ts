import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { Statement } from "@effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Ref, TestClock } from "effect"
import * as NodePath from "node:path"
import { IdGeneratorLive } from "../../../src/layers/ids/IdGeneratorLive.js"
import { SessionsSqliteAt, WRITE_AT_TURNS } from "../../../src/layers/sessions/SessionsSqlite.js"
import { Sessions } from "../../../src/services/Sessions.js"
import { turnOf } from "../../contract/SessionsContract.js"
import { clientOn } from "../../support/Sqlite.js"

/** A sessions store on a fresh file, and a count of the statements that record turns (its writer inherits it). */
const countingStore = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const file = NodePath.join(yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-sessions-writes-" }), "s.sqlite")
  const recordings = yield* Ref.make(0)
  const counting = Statement.withTransformer((statement) =>
    Effect.as(
      statement.compile()[0].startsWith("INSERT INTO session_turn_records")
        ? Ref.update(recordings, (n) => n + 1)
        : Effect.void,
      statement
    )
  )
  const layer = SessionsSqliteAt(file, "batch").pipe(Layer.provide(IdGeneratorLive))
  /** Its turns in the file itself, as another process reads them: [session, trace] in order. */
  const onDisk = Effect.scoped(Effect.flatMap(clientOn(file), (client) =>
    Effect.map(
      client<{ session_id: string; trace_id: string }>`SELECT session_id, trace_id FROM session_turns
        ORDER BY session_id, seq`,
      (rows) => rows.map((row) => [row.session_id, row.trace_id])
    ))).pipe(Effect.orDie)
  return { file, recordings, counting, layer, onDisk }
})

const tracesOf = (sessionId: string) =>
  Effect.flatMap(
    Sessions,
    (sessions) =>
      Effect.map(sessions.history(sessionId, "cli:alice"), (history) => history.turns.map((turn) => turn.trace_id))
  )

describe("Sessions in SQLite: a turn's record is written behind it, with others", () => {
  it.scoped("it waits until the window has passed, then the turns waiting are written in one statement", () =>
    Effect.gen(function*() {
      const { counting, layer, onDisk, recordings } = yield* countingStore
      yield* counting(
        Effect.gen(function*() {
          const sessions = yield* Sessions
          yield* sessions.recordTurn(turnOf("s1", 1))
          yield* sessions.recordTurn(turnOf("s2", 2))
          yield* sessions.recordTurn(turnOf("s1", 3))
          assert.strictEqual(yield* Ref.get(recordings), 0, "nothing is written while the window is open")
          assert.deepStrictEqual(yield* onDisk, [])
          yield* TestClock.adjust("19 millis")
          assert.strictEqual(yield* Ref.get(recordings), 0)
          yield* TestClock.adjust("1 millis")
          assert.strictEqual(yield* Ref.get(recordings), 1, "the three turns share one statement")
          assert.deepStrictEqual(yield* onDisk, [["s1", "trace-1"], ["s1", "trace-3"], ["s2", "trace-2"]])
        }).pipe(Effect.provide(layer))
      )
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a read of a session with a turn waiting writes what waits first; so does the end of the store, after which none is taken", () =>
    Effect.gen(function*() {
      const { counting, layer, onDisk, recordings } = yield* countingStore
      yield* counting(Effect.gen(function*() {
        const closedStore = yield* Effect.scoped(
          Effect.gen(function*() {
            const sessions = yield* Sessions
            yield* sessions.recordTurn(turnOf("s1", 1))
            yield* sessions.recordTurn(turnOf("s2", 2))
            // Another session's read does not wait for anything.
            assert.deepStrictEqual(yield* tracesOf("s3"), [])
            assert.strictEqual(yield* Ref.get(recordings), 0)
            assert.deepStrictEqual(yield* tracesOf("s1"), ["trace-1"])
            assert.strictEqual(yield* Ref.getAndSet(recordings, 0), 1, "both turns, in one statement")
            yield* sessions.recordTurn(turnOf("s1", 3))
            yield* sessions.recordTurn(turnOf("s4", 4))
            return sessions
          }).pipe(Effect.provide(layer))
        )
        assert.strictEqual(yield* Ref.get(recordings), 1, "written when the store closed")
        assert.include(
          (yield* Effect.flip(closedStore.recordTurn(turnOf("s5", 5)))).message,
          "the sessions store is closed"
        )
        assert.deepStrictEqual(yield* onDisk, [["s1", "trace-1"], ["s1", "trace-3"], ["s2", "trace-2"], [
          "s4",
          "trace-4"
        ]])
      }))
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped(`${WRITE_AT_TURNS} turns waiting are written at once, without waiting for the window`, () =>
    Effect.gen(function*() {
      const { counting, layer, onDisk } = yield* countingStore
      yield* counting(
        Effect.gen(function*() {
          const sessions = yield* Sessions
          for (let n = 1; n < WRITE_AT_TURNS; n++) yield* sessions.recordTurn(turnOf(`s${n}`, n))
          assert.strictEqual((yield* onDisk).length, 0)
          yield* sessions.recordTurn(turnOf(`s${WRITE_AT_TURNS}`, WRITE_AT_TURNS))
          assert.strictEqual((yield* onDisk).length, WRITE_AT_TURNS)
        }).pipe(Effect.provide(layer))
      )
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("another owner's turn is refused as it is recorded, from what waits as from what is written", () =>
    Effect.gen(function*() {
      const { counting, layer } = yield* countingStore
      yield* counting(
        Effect.gen(function*() {
          const sessions = yield* Sessions
          // Forked one after the other, they are all recorded before any write.
          const atOnce = (turns: ReadonlyArray<ReturnType<typeof turnOf>>) =>
            Effect.flatMap(
              Effect.forEach(turns, (turn) => Effect.fork(Effect.either(sessions.recordTurn(turn)))),
              (fibers) =>
                Effect.forEach(fibers, (fiber) =>
                  Effect.map(Fiber.join(fiber), (outcome) =>
                    outcome._tag === "Left" ? outcome.left.reason : "ok"))
            )
          yield* sessions.recordTurn(turnOf("s1", 1))
          // s1's owner is known from the turn waiting.
          assert.deepStrictEqual(
            yield* atOnce([turnOf("s2", 2), turnOf("s1", 3, { owner: "telegram:@mallory" }), turnOf("s1", 4)]),
            ["ok", "Forbidden", "ok"]
          )
          assert.deepStrictEqual(yield* tracesOf("s1"), ["trace-1", "trace-4"])
          // Now from the database.
          const refused = yield* Effect.flip(sessions.recordTurn(turnOf("s1", 5, { owner: "telegram:@mallory" })))
          assert.strictEqual(refused.reason, "Forbidden")
          assert.deepStrictEqual(yield* tracesOf("s2"), ["trace-2"])
        }).pipe(Effect.provide(layer))
      )
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a turn its write refuses (another process opened the session meanwhile) fails alone", () =>
    Effect.gen(function*() {
      const { counting, file, layer, recordings } = yield* countingStore
      yield* counting(
        Effect.gen(function*() {
          const sessions = yield* Sessions
          // Read by its turn as new: its owner is taken to be the turn's.
          assert.deepStrictEqual(yield* tracesOf("s9"), [])
          yield* Effect.scoped(
            Effect.flatMap(
              clientOn(file),
              (other) =>
                other`INSERT INTO sessions (id, channel, owner, created_at, last_active_at)
              VALUES ('s9', 'telegram', 'telegram:@mallory', 1, 1)`
            )
          )
          yield* sessions.recordTurn(turnOf("s9", 1))
          yield* sessions.recordTurn(turnOf("s2", 2))
          yield* TestClock.adjust("20 millis")
          // The statement of both was refused, then each was written alone.
          assert.strictEqual(yield* Ref.get(recordings), 3)
          assert.deepStrictEqual(yield* tracesOf("s2"), ["trace-2"])
          assert.strictEqual((yield* Effect.flip(sessions.history("s9", "cli:alice"))).reason, "Forbidden")
          assert.deepStrictEqual((yield* sessions.history("s9", "telegram:@mallory")).turns, [])
        }).pipe(Effect.provide(layer))
      )
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a turn two stores both record (one added it back while the other had it waiting) is there once", () =>
    Effect.gen(function*() {
      const { file, layer, onDisk } = yield* countingStore
      const other = SessionsSqliteAt(file, "batch").pipe(Layer.provide(IdGeneratorLive))
      yield* Effect.gen(function*() {
        const sessions = yield* Sessions
        yield* sessions.recordTurn(turnOf("s1", 1))
        yield* sessions.recordTurn(turnOf("s1", 2))
        // The other store (another process) writes the same turn first, then one of its own.
        yield* Effect.scoped(
          Effect.gen(function*() {
            const second = yield* Sessions
            yield* second.recordTurn(turnOf("s1", 2))
            yield* second.recordTurn(turnOf("s2", 3))
          }).pipe(Effect.provide(other))
        )
        assert.deepStrictEqual(yield* onDisk, [["s1", "trace-2"], ["s2", "trace-3"]])
        assert.deepStrictEqual(yield* tracesOf("s1"), ["trace-2", "trace-1"])
        assert.deepStrictEqual(yield* onDisk, [["s1", "trace-2"], ["s1", "trace-1"], ["s2", "trace-3"]])
      }).pipe(Effect.provide(layer))
    }).pipe(Effect.provide(NodeContext.layer)))
})
