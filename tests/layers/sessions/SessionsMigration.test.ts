import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import * as Migrator from "@effect/sql/Migrator"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as NodePath from "node:path"
import { IdGeneratorLive } from "../../../src/layers/ids/IdGeneratorLive.js"
import Sessions0001 from "../../../src/layers/sessions/migrations/0001_sessions.js"
import { SessionsSqliteAt } from "../../../src/layers/sessions/SessionsSqlite.js"
import { Sessions } from "../../../src/services/Sessions.js"

const turn = (sessionId: string, owner: string, traceId: string, at: number) => ({
  sessionId,
  owner,
  traceId,
  userMessage: `question ${traceId}`,
  finalResponse: `answer ${traceId}`,
  at,
  promptTokens: 10,
  cachedTokens: 0,
  responseTokens: 5,
  taintedBy: [],
  answeredAt: null
})

describe("Sessions database made by an earlier version", () => {
  it.scoped("is migrated at start: its turns are kept, and the next turn is numbered after them", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-sessions-migration-" })
      const file = NodePath.join(dir, "sessions.sqlite")
      // The first version's schema, with one session of two turns written as that version wrote them.
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* Migrator.make({})({
          loader: Migrator.fromRecord({ "1_sessions": Sessions0001 }),
          table: "sessions_migrations"
        })
        yield* sql`INSERT INTO sessions VALUES ('s', 'cli', 'cli:alice', 1000, 2000)`
        for (const seq of [1, 2]) {
          yield* sql`INSERT INTO session_turns VALUES ('s', ${seq}, ${`t${seq}`}, 'q', 'a', ${seq * 1000}, 1, 0, 1,
            '[]', NULL)`
        }
      }).pipe(Effect.provide(SqliteClient.layer({ filename: file })), Effect.scoped)

      const history = yield* Effect.gen(function*() {
        const store = yield* Sessions
        yield* store.recordTurn(turn("s", "cli:alice", "t3", 3000))
        const refused = yield* Effect.either(store.recordTurn(turn("s", "http:mallory", "t4", 4000)))
        assert.strictEqual(refused._tag === "Left" ? refused.left.reason : "recorded", "Forbidden")
        return yield* store.history("s", "cli:alice")
      }).pipe(Effect.provide(SessionsSqliteAt(file).pipe(Layer.provide(IdGeneratorLive))), Effect.scoped)
      assert.deepStrictEqual(history.turns.map((t) => [t.seq, t.trace_id]), [[1, "t1"], [2, "t2"], [3, "t3"]])
      // The index on the last activity, which every turn's record had to update, is gone.
      const indexes = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<
          { name: string }
        >`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'sessions'
          AND sql IS NOT NULL`
      }).pipe(Effect.provide(SqliteClient.layer({ filename: file })), Effect.scoped)
      assert.deepStrictEqual(indexes, [])
    }).pipe(Effect.provide(NodeContext.layer)))
})
