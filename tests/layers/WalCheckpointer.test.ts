import * as Reactivity from "@effect/experimental/Reactivity"
import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger, type Scope } from "effect"
import * as NodePath from "node:path"
import { makeWalCheckpointer } from "../../src/layers/WalCheckpointer.js"
import { freshDatabase } from "../support/Sqlite.js"

// A database in WAL mode, written through the SQL client as the stores write: each INSERT its own commit.
const withDatabase = <A, E>(
  body: (file: string, sql: SqlClient.SqlClient, fs: FileSystem.FileSystem) => Effect.Effect<A, E, Scope.Scope>
) =>
  Effect.gen(function*() {
    const { client: sql, file } = yield* freshDatabase("store.sqlite")
    yield* sql`CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)`
    return yield* body(file, sql, yield* FileSystem.FileSystem)
  }).pipe(Effect.provide(NodeContext.layer))

const insertRows = (sql: SqlClient.SqlClient, n: number) =>
  Effect.forEach(
    Array.from({ length: n }, (_, i) => i),
    (i) => sql`INSERT INTO notes (text) VALUES (${`note ${i} `.repeat(100)})`,
    { discard: true }
  )

const warnings = (into: Array<string>) =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ logLevel, message }) => {
      if (logLevel._tag === "Warning") into.push(String(message))
    })
  )

describe("WalCheckpointer", () => {
  it.scoped("folds the log into the database file from a thread of its own", () =>
    withDatabase((file, sql, fs) =>
      Effect.gen(function*() {
        const checkpointer = yield* makeWalCheckpointer(file)
        yield* insertRows(sql, 50)
        // Far below the automatic checkpoint's 1,000 pages: every page written is still in the log only.
        const before = (yield* fs.stat(file)).size
        const result = yield* checkpointer.checkpoint
        assert.isFalse(result.busy)
        assert.isAbove(result.log, 50)
        assert.strictEqual(result.checkpointed, result.log, "every frame of the log is in the database file")
        // The 50 notes hold about 35 KB of text.
        assert.isAtLeast(Number((yield* fs.stat(file)).size) - Number(before), 35_000)
        const [{ n }] = yield* sql<{ n: number }>`SELECT count(*) AS n FROM notes`
        assert.strictEqual(n, 50)
      })
    ))

  it.scoped("runs a pass after every `every` writes, in the order passes are asked for", () =>
    withDatabase((file, sql) =>
      Effect.gen(function*() {
        const checkpointer = yield* makeWalCheckpointer(file, { every: 4 })
        for (let i = 0; i < 3; i++) checkpointer.wrote()
        yield* insertRows(sql, 3)
        assert.strictEqual((yield* checkpointer.checkpoint).passes, 1, "three writes ask for no pass")
        yield* insertRows(sql, 1)
        checkpointer.wrote()
        assert.strictEqual(
          (yield* checkpointer.checkpoint).passes,
          3,
          "the fourth write asked for one, run before the one awaited"
        )
        for (let i = 0; i < 8; i++) checkpointer.wrote()
        assert.strictEqual((yield* checkpointer.checkpoint).passes, 6)
        // A statement of many rows counts as many writes: three rows, then five, reach four once (one pass folds
        // in the whole log).
        checkpointer.wrote(3)
        assert.strictEqual((yield* checkpointer.checkpoint).passes, 7)
        checkpointer.wrote(5)
        assert.strictEqual((yield* checkpointer.checkpoint).passes, 9)
      })
    ))

  it.scoped("closing ends the thread before the writer's connection, which then removes the log", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-wal-" })
      const file = NodePath.join(dir, "store.sqlite")
      const logged: Array<string> = []
      yield* Effect.scoped(
        Effect.gen(function*() {
          const sql = yield* SqliteClient.make({ filename: file }).pipe(Effect.provide(Reactivity.layer))
          yield* sql`CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)`
          // Made after the client, so closed before it, as the stores make it.
          const checkpointer = yield* makeWalCheckpointer(file)
          yield* insertRows(sql, 10)
          yield* checkpointer.checkpoint
          yield* insertRows(sql, 10)
          assert.isTrue(yield* fs.exists(`${file}-wal`))
        })
      ).pipe(Effect.provide(warnings(logged)))
      // A connection still open in the thread would have kept the log: the last one to close removes it.
      assert.isFalse(yield* fs.exists(`${file}-wal`), "the log is removed")
      assert.deepStrictEqual(logged, [], "an ending asked for is not a failure")
      const sql = yield* SqliteClient.make({ filename: file }).pipe(Effect.provide(Reactivity.layer))
      const [{ n }] = yield* sql<{ n: number }>`SELECT count(*) AS n FROM notes`
      assert.strictEqual(n, 20)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a database the thread cannot open: the checkpoint fails naming it, a warning says so, writes go on", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-wal-" })
      const file = NodePath.join(dir, "missing", "store.sqlite")
      const logged: Array<string> = []
      const checkpointer = yield* makeWalCheckpointer(file, { every: 1 }).pipe(Effect.provide(warnings(logged)))
      const error = yield* Effect.flip(checkpointer.checkpoint)
      assert.strictEqual(error._tag, "WalCheckpointError")
      assert.strictEqual(error.file, file)
      assert.match(error.message, /unable to open database file|directory does not exist/)
      // The warning is logged by a fiber of its own: it has run once this one yields.
      yield* Effect.yieldNow()
      assert.strictEqual(logged.length, 1)
      assert.include(logged[0], file)
      assert.include(logged[0], "checkpointed by each commit")
      checkpointer.wrote()
      checkpointer.wrote()
      const again = yield* Effect.flip(checkpointer.checkpoint)
      assert.strictEqual(again, error, "failed once, for good")
      assert.strictEqual(logged.length, 1)
    }).pipe(Effect.provide(NodeContext.layer)))
})
