import * as Reactivity from "@effect/experimental/Reactivity"
import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodePath from "node:path"
import { makePlanCache } from "../../../src/layers/plans/PlanCacheSqlite.js"

/** The plan cache of a fresh database, and what `PRAGMA synchronous` says on its connection then. */
const synchronousUnder = (fsync: "always" | "batch") =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const dir = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-plans-" })
    const file = NodePath.join(dir, "plans.sqlite")
    const client = yield* SqliteClient.make({ filename: file }).pipe(Effect.provide(Reactivity.layer))
    const cache = yield* makePlanCache(file, fsync).pipe(
      Effect.provideService(SqlClient.SqlClient, client),
      Effect.provideService(SqliteClient.SqliteClient, client)
    )
    const saved = yield* cache.save({
      request: "add 1 and 2",
      plan: { steps: [] },
      signature: {},
      answer: { kind: "template", text: "3" },
      source_trace: "trace-1"
    }, 1_000)
    assert.strictEqual(saved.successes, 1)
    const [{ synchronous }] = yield* client<{ synchronous: number }>`PRAGMA synchronous`
    return synchronous
  }).pipe(Effect.provide(NodeContext.layer))

describe("PlanCacheSqlite", () => {
  it.scoped("as durable as the traces: under batch no plan written waits for the disk, under always each does", () =>
    Effect.gen(function*() {
      // SQLite's levels: 1 NORMAL (in WAL, nothing synced at commit), 2 FULL (the log synced at every commit).
      assert.strictEqual(yield* synchronousUnder("batch"), 1)
      assert.strictEqual(yield* synchronousUnder("always"), 2)
    }))
})
