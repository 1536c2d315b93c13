import * as Reactivity from "@effect/experimental/Reactivity"
import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodePath from "node:path"
import { IdGeneratorLive } from "../../../src/layers/ids/IdGeneratorLive.js"
import { makeSessionsSql } from "../../../src/layers/sessions/SessionsSqlite.js"
import { turnOf } from "../../contract/SessionsContract.js"

/** The sessions of a fresh database, a turn recorded, and what `PRAGMA synchronous` says on its connection then. */
const synchronousUnder = (fsync: "always" | "batch") =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const dir = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-sessions-durability-" })
    const file = NodePath.join(dir, "sessions.sqlite")
    const client = yield* SqliteClient.make({ filename: file }).pipe(Effect.provide(Reactivity.layer))
    const sessions = yield* makeSessionsSql(file, fsync).pipe(
      Effect.provideService(SqlClient.SqlClient, client),
      Effect.provideService(SqliteClient.SqliteClient, client),
      Effect.provide(IdGeneratorLive)
    )
    yield* sessions.recordTurn(turnOf("s1", 1))
    const [{ synchronous }] = yield* client<{ synchronous: number }>`PRAGMA synchronous`
    return synchronous
  }).pipe(Effect.provide(NodeContext.layer))

describe("Sessions in SQLite: as durable as the traces", () => {
  it.scoped("under always every commit is synced (FULL), under batch none waits for the disk (NORMAL)", () =>
    Effect.gen(function*() {
      // SQLite's levels: 1 NORMAL (in WAL, nothing synced at commit), 2 FULL (the log synced at every commit).
      // better-sqlite3's SQLite defaults a WAL database to NORMAL: `always` has to ask for FULL.
      assert.strictEqual(yield* synchronousUnder("always"), 2)
      assert.strictEqual(yield* synchronousUnder("batch"), 1)
    }))
})
