import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger, Scope } from "effect"
import * as NodePath from "node:path"
import {
  makeWalCheckpointer,
  SQLITE_AUTOCHECKPOINT,
  type WalCheckpointerOptions
} from "../../src/layers/WalCheckpointer.js"

/** A database in WAL mode with one table, written through the SQL client as the stores write theirs. */
const withDatabase = <A, E>(
  use: (file: string) => Effect.Effect<A, E, SqlClient.SqlClient | FileSystem.FileSystem | Scope.Scope>
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const dir = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-checkpointer-" })
    const file = NodePath.join(dir, "store.sqlite")
    const result = yield* Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE t (n INTEGER NOT NULL, text TEXT NOT NULL)`
      return yield* use(file)
    }).pipe(Effect.provide(SqliteClient.layer({ filename: file })), Effect.scoped)
    // Reopened after every connection closed: what was written is there.
    const rows = yield* Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ n: number }>`SELECT n FROM t ORDER BY n`
    }).pipe(Effect.provide(SqliteClient.layer({ filename: file })), Effect.scoped)
    return { result, written: rows.map((row) => row.n) }
  }).pipe(Effect.provide(NodeContext.layer), Effect.scoped)

const checkpointed = (file: string, options: Omit<WalCheckpointerOptions, "file" | "synchronous">) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe("PRAGMA synchronous = NORMAL")
    const checkpointer = yield* makeWalCheckpointer(sql, { ...options, file, synchronous: "NORMAL" })
    let n = 0
    const write = Effect.gen(function*() {
      n += 1
      yield* sql`INSERT INTO t ${sql.insert({ n, text: "x".repeat(2000) })}`
      yield* checkpointer.committed
    })
    const autocheckpoint = Effect.map(
      sql<{ wal_autocheckpoint: number }>`PRAGMA wal_autocheckpoint`,
      ([row]) => row!.wal_autocheckpoint
    )
    return { sql, checkpointer, write, autocheckpoint }
  })

describe("WAL checkpoints in a worker thread", () => {
  it.scoped("start once enough is written, take over from SQLite's own, and copy everything written", () =>
    Effect.gen(function*() {
      const { result, written } = yield* withDatabase((file) =>
        Effect.gen(function*() {
          const { autocheckpoint, checkpointer, write } = yield* checkpointed(file, { startAfter: 3, every: 2 })
          yield* write
          yield* write
          const early = yield* checkpointer.settled
          assert.strictEqual(early.mode, "sqlite", "a short-lived writer never starts the worker")
          assert.strictEqual(yield* autocheckpoint, SQLITE_AUTOCHECKPOINT)
          yield* write // the third: the worker starts
          yield* checkpointer.settled
          yield* write // it is ready: SQLite's own checkpoints are off, the first one is asked of the worker
          const first = yield* checkpointer.settled
          assert.strictEqual(first.mode, "worker")
          assert.strictEqual(first.checkpoints, 1)
          assert.strictEqual(yield* autocheckpoint, 0)
          for (let i = 0; i < 10; i++) {
            yield* write
            yield* checkpointer.settled
          }
          const last = yield* checkpointer.settled
          assert.strictEqual(last.checkpoints, 6, "one every two writes")
          assert.isAbove(last.log, 0)
          assert.strictEqual(last.checkpointed, last.log, "with no write meanwhile, the whole WAL is copied")
          assert.strictEqual(last.catchUps, 0)
          return last
        })
      )
      assert.strictEqual(result.mode, "worker")
      assert.deepStrictEqual(written, Array.from({ length: 14 }, (_, i) => i + 1))
    }))

  it.scoped("a WAL that grew past its bound is checkpointed by the writer's next write", () =>
    Effect.gen(function*() {
      const { result, written } = yield* withDatabase((file) =>
        Effect.gen(function*() {
          const { checkpointer, write } = yield* checkpointed(file, { startAfter: 1, every: 1, maxFrames: 1 })
          yield* write
          yield* checkpointer.settled
          yield* write // the worker checkpoints a WAL of more than one frame
          assert.strictEqual((yield* checkpointer.settled).catchUps, 0)
          yield* write // so this write checkpoints in its own thread
          return yield* checkpointer.settled
        })
      )
      assert.strictEqual(result.catchUps, 1)
      assert.deepStrictEqual(written, [1, 2, 3])
    }))

  it.scoped("a worker that cannot start gives the checkpoints back to SQLite, says why, and nothing is lost", () =>
    Effect.gen(function*() {
      const logged: Array<string> = []
      const logger = Logger.make(({ message }) => {
        logged.push(String(Array.isArray(message) ? message.join(" ") : message))
      })
      const { result, written } = yield* withDatabase((file) =>
        Effect.gen(function*() {
          const { autocheckpoint, checkpointer, write } = yield* checkpointed(file, {
            startAfter: 1,
            every: 1,
            driver: NodePath.join(file, "..", "no-such-driver.js")
          })
          yield* write
          yield* checkpointer.settled
          yield* write
          yield* write
          const state = yield* checkpointer.settled
          return { state, autocheckpoint: yield* autocheckpoint }
        })
      ).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
      assert.strictEqual(result.state.mode, "fallback")
      assert.strictEqual(result.autocheckpoint, SQLITE_AUTOCHECKPOINT)
      assert.strictEqual(result.state.checkpoints, 0)
      assert.lengthOf(logged.filter((line) => line.includes("checkpoints are back in the writer's thread")), 1)
      assert.isTrue(logged.some((line) => line.includes("no-such-driver")), logged.join("\n"))
      assert.deepStrictEqual(written, [1, 2, 3])
    }))
})
