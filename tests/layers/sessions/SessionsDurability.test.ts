import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { IdGeneratorLive } from "../../../src/layers/ids/IdGeneratorLive.js"
import { makeSessionsSql } from "../../../src/layers/sessions/SessionsSqlite.js"
import { turnOf } from "../../contract/SessionsContract.js"
import { synchronousLevel } from "../../support/Sqlite.js"

/** The sessions of a fresh database, a turn recorded: the level their connection is left at. */
const synchronousUnder = (fsync: "always" | "batch") =>
  synchronousLevel(
    "sessions.sqlite",
    (file) => Effect.provide(makeSessionsSql(file, fsync), IdGeneratorLive),
    (sessions) => sessions.recordTurn(turnOf("s1", 1))
  )

describe("Sessions in SQLite: as durable as the traces", () => {
  it.scoped("under always every commit is synced (FULL), under batch none waits for the disk (NORMAL)", () =>
    Effect.gen(function*() {
      // better-sqlite3's SQLite defaults a WAL database to NORMAL: `always` has to ask for FULL.
      assert.strictEqual(yield* synchronousUnder("always"), 2)
      assert.strictEqual(yield* synchronousUnder("batch"), 1)
    }))
})
