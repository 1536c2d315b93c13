import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { SqlClient, Statement } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Ref, Scope, Tracer } from "effect"
import * as NodePath from "node:path"
import { makeSqliteDirect } from "../../src/layers/SqliteDirect.js"

/** A client on a new database file with a table `notes`, and the direct runner over it. */
const setup = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const dir = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-sqlite-direct-" })
  const context = yield* Layer.build(SqliteClient.layer({ filename: NodePath.join(dir, "notes.sqlite") }))
  const sql = yield* Effect.provide(SqlClient.SqlClient, context)
  yield* sql`CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)`
  const direct = yield* Effect.provide(makeSqliteDirect, context)
  return { sql, direct }
})

/** A tracer that keeps the names of the spans it makes (an exporting tracer, as OTLP's is). */
const recordingTracer = () => {
  const names: Array<string> = []
  const tracer = Tracer.make({
    span: (...args) => {
      names.push(args[0])
      return Effect.runSync(Effect.tracer).span(...args)
    },
    context: (f) => f()
  })
  return { names, tracer }
}

describe("SqliteDirect", () => {
  it.scoped("runs a statement's own text and parameters on the connection: the same rows, the same errors", () =>
    Effect.gen(function*() {
      const { direct, sql } = yield* setup
      yield* direct.run(sql`INSERT INTO notes ${sql.insert([{ id: 1, text: "tea" }, { id: 2, text: "milk" }])}`)
      const rows = yield* direct.run(sql<{ id: number; text: string }>`SELECT id, text FROM notes WHERE id > ${0}
        ORDER BY id`)
      assert.deepStrictEqual(rows, yield* sql`SELECT id, text FROM notes WHERE id > ${0} ORDER BY id`)
      assert.deepStrictEqual(rows, [{ id: 1, text: "tea" }, { id: 2, text: "milk" }])
      const duplicate = yield* Effect.flip(direct.run(sql`INSERT INTO notes ${sql.insert({ id: 1, text: "again" })}`))
      assert.strictEqual(duplicate._tag, "SqlError")
      assert.include(String(duplicate.cause), "UNIQUE constraint failed: notes.id")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("runs on the connection itself: it does not wait for the client's permit", () =>
    Effect.gen(function*() {
      const { direct, sql } = yield* setup
      // The permit, held as a transaction holds it: a statement through the client waits for it.
      const holding = yield* Scope.make()
      yield* Scope.extend(sql.reserve, holding)
      const viaClient = yield* Effect.fork(sql`SELECT count(*) AS n FROM notes`)
      const viaConnection = yield* Effect.fork(direct.run(sql<{ n: number }>`SELECT count(*) AS n FROM notes`))
      yield* Effect.yieldNow()
      assert.isNull(viaClient.unsafePoll())
      assert.deepStrictEqual(viaConnection.unsafePoll(), Exit.succeed([{ n: 0 }]))
      yield* Scope.close(holding, Exit.void)
      assert.deepStrictEqual(yield* Fiber.join(viaClient), [{ n: 0 }])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("never runs inside a transaction: a statement started during one waits for its end", () =>
    Effect.gen(function*() {
      const { direct, sql } = yield* setup
      const inside = yield* Deferred.make<void>()
      const finish = yield* Deferred.make<void>()
      // A transaction that writes a row, then waits, then fails: its row is rolled back.
      const transaction = yield* direct.exclusive(sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO notes ${sql.insert({ id: 7, text: "uncommitted" })}`
        yield* Deferred.succeed(inside, undefined)
        yield* Deferred.await(finish)
        return yield* Effect.fail("rolled back" as const)
      }))).pipe(Effect.exit, Effect.fork)
      yield* Deferred.await(inside)
      // On the connection while the transaction is open, the count would be 1 (the uncommitted row).
      const count = yield* direct.run(sql<{ n: number }>`SELECT count(*) AS n FROM notes`).pipe(Effect.fork)
      yield* Effect.yieldNow()
      assert.isNull(count.unsafePoll(), "the statement waits for the transaction")
      yield* Deferred.succeed(finish, undefined)
      assert.isTrue(Exit.isFailure(yield* Fiber.join(transaction)))
      assert.deepStrictEqual(yield* Fiber.join(count), [{ n: 0 }])
      // After it, statements go to the connection again.
      yield* direct.run(sql`INSERT INTO notes ${sql.insert({ id: 8, text: "after" })}`)
      assert.deepStrictEqual(yield* direct.run(sql`SELECT id FROM notes`), [{ id: 8 }])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a transaction begins only once the statements under way on the connection have ended", () =>
    Effect.gen(function*() {
      const { direct, sql } = yield* setup
      // A transaction that writes a row, lets other fibers run, then fails: its row is never committed, so a
      // statement that counts it ran inside the transaction.
      const transaction = direct.exclusive(sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO notes ${sql.insert({ id: 1, text: "uncommitted" })}`
        yield* Effect.yieldNow()
        return yield* Effect.fail("rolled back" as const)
      })))
      // The statement's fiber lets the others run every few operations, so that the transaction starts while it is
      // half-way at some point of the sweep (without the wait, one of these counts the uncommitted row).
      for (const slice of [10, 16, 24]) {
        for (let head = 0; head < 32; head++) {
          const count = yield* Effect.fork(
            direct.run(sql<{ n: number }>`SELECT count(*) AS n FROM notes`).pipe(Effect.withMaxOpsBeforeYield(slice))
          )
          for (let i = 0; i < head; i++) yield* Effect.yieldNow()
          assert.isTrue(Exit.isFailure(yield* Effect.exit(transaction)))
          assert.deepStrictEqual(yield* Fiber.join(count), [{ n: 0 }], `${slice} operations a slice, ${head} ahead`)
        }
      }
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("goes through the client, with its span, when a tracer exports spans", () =>
    Effect.gen(function*() {
      const { direct, sql } = yield* setup
      const { names, tracer } = recordingTracer()
      yield* direct.run(sql`SELECT id FROM notes`).pipe(Effect.withTracer(tracer))
      assert.deepStrictEqual(names, ["sql.execute"])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("goes through the client under a statement transformer, which sees the statement", () =>
    Effect.gen(function*() {
      const { direct, sql } = yield* setup
      const seen = yield* Ref.make<ReadonlyArray<string>>([])
      yield* direct.run(sql`SELECT id FROM notes WHERE id = ${3}`).pipe(
        Statement.withTransformer((statement) =>
          Effect.as(Ref.update(seen, (all) => [...all, statement.compile()[0]]), statement)
        )
      )
      assert.deepStrictEqual(yield* Ref.get(seen), ["SELECT id FROM notes WHERE id = ?"])
    }).pipe(Effect.provide(NodeContext.layer)))
})
