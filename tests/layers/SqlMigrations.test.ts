import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { SqlClient, Statement } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import * as NodePath from "node:path"
import { migrateRecord } from "../../src/layers/SqlMigrations.js"

const first = {
  "1_notes": Effect.flatMap(SqlClient.SqlClient, (sql) => sql`CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)`)
}
const both = {
  ...first,
  "2_note_tags": Effect.flatMap(SqlClient.SqlClient, (sql) => sql`ALTER TABLE notes ADD COLUMN tags TEXT`)
}

/** Runs `effect` against the database file, counting the statements it executes. */
const counted = <A, E>(file: string, effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.gen(function*() {
    const statements = yield* Ref.make(0)
    const result = yield* effect.pipe(
      Statement.withTransformer((statement) => Effect.as(Ref.update(statements, (n) => n + 1), statement))
    )
    return { result, statements: yield* Ref.get(statements) }
  }).pipe(Effect.provide(SqliteClient.layer({ filename: file })))

describe("migrateRecord", () => {
  it.scoped("migrates a new database, then an older one, and checks an up-to-date one with one read", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-migrations-" })
      const file = NodePath.join(dir, "notes.sqlite")

      const created = yield* counted(file, migrateRecord("notes_migrations", first))
      assert.deepStrictEqual(created.result, [[1, "notes"]])

      const upgraded = yield* counted(file, migrateRecord("notes_migrations", both))
      assert.deepStrictEqual(upgraded.result, [[2, "note_tags"]])

      const current = yield* counted(file, migrateRecord("notes_migrations", both))
      assert.deepStrictEqual(current.result, [])
      assert.strictEqual(current.statements, 1, "an up-to-date database is checked with one statement")

      // A database a newer version migrated further is left as it is, by the migrator.
      const older = yield* counted(file, migrateRecord("notes_migrations", first))
      assert.deepStrictEqual(older.result, [])
      assert.isAbove(older.statements, 1)

      const columns = yield* counted(
        file,
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ name: string }>`SELECT name FROM pragma_table_info('notes')`)
      )
      assert.deepStrictEqual(columns.result.map((column) => column.name), ["id", "text", "tags"])
    }).pipe(Effect.provide(NodeContext.layer)))
})
