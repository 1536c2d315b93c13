import * as Reactivity from "@effect/experimental/Reactivity"
import { FileSystem } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Layer, Option, Schema } from "effect"
import * as NodePath from "node:path"
import { canonicalJson } from "../../domain/ArgsHash.js"
import { CachedPlan, PlanAnswer } from "../../domain/CachedPlan.js"
import { messageOf } from "../../domain/Errors.js"
import { onFirstCall } from "../../domain/OnFirstCall.js"
import { OWNER_FOLDER, ownerOnlyDatabase } from "../../domain/OwnerOnly.js"
import { Plan } from "../../domain/Plan.js"
import { PlanCacheError } from "../../domain/PlanCacheError.js"
import { sha256Hex } from "../../domain/Sha256.js"
import { MyclawConfig } from "../../services/MyclawConfig.js"
import { PlanCache } from "../../services/PlanCache.js"
import { Workspace } from "../../services/Workspace.js"
import { makeSqliteDirect } from "../SqliteDirect.js"
import { walDurability } from "../SqliteDurability.js"
import { migrateRecord } from "../SqlMigrations.js"
import { makeWalCheckpointer } from "../WalCheckpointer.js"

const migrations = {
  "1_plans": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`CREATE TABLE plans (
      id TEXT PRIMARY KEY,
      request TEXT NOT NULL UNIQUE,
      plan TEXT NOT NULL,
      signature TEXT NOT NULL,
      answer TEXT NOT NULL,
      successes INTEGER NOT NULL,
      failures INTEGER NOT NULL,
      source_trace TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      last_used_at INTEGER
    )`)
}

const Row = Schema.Struct({
  id: Schema.String,
  request: Schema.String,
  plan: Schema.parseJson(Plan),
  signature: Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.String })),
  answer: Schema.parseJson(PlanAnswer),
  successes: Schema.Number,
  failures: Schema.Number,
  source_trace: Schema.String,
  created_at: Schema.Number,
  last_used_at: Schema.NullOr(Schema.Number)
})
const decodeRows = onFirstCall(() => Schema.decodeUnknown(Schema.Array(Row)))
const encodeRow = onFirstCall(() => Schema.encodeSync(Row))

/** A plan's id: the same request always has the same one. */
const planId = (request: string) => `plan-${sha256Hex(request).slice(0, 12)}`

/**
 * The plan cache over the SQLite client of `file` (the table is created or migrated at start). A cache, as durable
 * as the traces (`traces.fsync`): under `batch` no write waits for the disk (WAL, `synchronous = NORMAL`: a crash
 * of myclaw loses nothing, a power loss may lose the last plans, which later turns make again); under `always`
 * each write is synced.
 */
export const makePlanCache = (file: string, fsync: "always" | "batch" = "always") =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const failed = (error: unknown) =>
      new PlanCacheError({ path: file, message: `the plan cache failed: ${messageOf(error)}`, cause: error })
    yield* migrateRecord("plans_migrations", migrations).pipe(Effect.mapError(failed))
    yield* walDurability(fsync).pipe(Effect.mapError(failed))
    // Each write counted, so that the log is folded into the database by a thread of its own.
    const checkpointer = yield* makeWalCheckpointer(file)
    // A turn looks its request up, and may save or count a plan: on the connection itself (the store runs no
    // transaction).
    const direct = yield* makeSqliteDirect.pipe(Effect.mapError(failed))

    const query = (rows: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
      rows.pipe(Effect.flatMap(decodeRows), Effect.mapError(failed))
    const byRequest = (request: string) =>
      Effect.map(query(direct.run(sql`SELECT * FROM plans WHERE request = ${request}`)), (rows) =>
        Option.fromNullable(rows[0]))
    const byId = (id: string) =>
      Effect.map(query(direct.run(sql`SELECT * FROM plans WHERE id = ${id}`)), (rows) =>
        Option.fromNullable(rows[0]))

    return PlanCache.of({
      lookup: byRequest,
      get: byId,
      list: query(sql`SELECT * FROM plans ORDER BY created_at, id`),
      save: (plan, now) =>
        Effect.gen(function*() {
          const existing = yield* byRequest(plan.request)
          const same = Option.isSome(existing) &&
            canonicalJson(existing.value.plan) === canonicalJson(plan.plan) &&
            canonicalJson(existing.value.signature) === canonicalJson(plan.signature)
          const row: CachedPlan = same
            ? { ...existing.value, answer: plan.answer, successes: existing.value.successes + 1, last_used_at: now }
            : {
              ...plan,
              id: planId(plan.request),
              successes: 1,
              failures: 0,
              created_at: now,
              last_used_at: null
            }
          const encoded = encodeRow(row)
          yield* direct.run(sql`INSERT OR REPLACE INTO plans ${sql.insert(encoded)}`).pipe(Effect.mapError(failed))
          checkpointer.wrote()
          return row
        }),
      used: (id, succeeded, now) =>
        direct.run(
          succeeded
            ? sql`UPDATE plans SET successes = successes + 1, last_used_at = ${now} WHERE id = ${id}`
            : sql`UPDATE plans SET failures = failures + 1, last_used_at = ${now} WHERE id = ${id}`
        ).pipe(
          Effect.andThen(() => checkpointer.wrote()),
          Effect.mapError(failed)
        ),
      forget: (id) =>
        sql<{ id: string }>`DELETE FROM plans WHERE id = ${id} RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.mapError(failed)
        ),
      // In chunks, under SQLite's bound on a statement's parameters.
      forgetMadeBy: (traceIds) =>
        Effect.reduce(
          Array.from({ length: Math.ceil(traceIds.length / 500) }, (_, i) => traceIds.slice(i * 500, i * 500 + 500)),
          0,
          (deleted, chunk) =>
            Effect.map(
              sql<{ id: string }>`DELETE FROM plans WHERE source_trace IN ${sql.in(chunk)} RETURNING id`,
              (rows) => deleted + rows.length
            )
        ).pipe(Effect.mapError(failed))
    })
  })

/** A cache that cannot be opened: every use fails with why, and turns go on without plans. */
const unavailable = (error: PlanCacheError) =>
  PlanCache.of({
    lookup: () => Effect.fail(error),
    get: () => Effect.fail(error),
    list: Effect.fail(error),
    save: () => Effect.fail(error),
    used: () => Effect.fail(error),
    forget: () => Effect.fail(error),
    forgetMadeBy: () => Effect.fail(error)
  })

/** The workspace's plan cache, `.state/plans.sqlite` (created at start; one that cannot be opened is logged). */
export const PlanCacheSqlite = Layer.scoped(
  PlanCache,
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const { config } = yield* MyclawConfig
    const fs = yield* FileSystem.FileSystem
    const file = NodePath.join(workspace.root, ".state", "plans.sqlite")
    const failed = (error: unknown) =>
      new PlanCacheError({ path: file, message: `the plan cache cannot be opened: ${messageOf(error)}` })
    yield* fs.makeDirectory(NodePath.dirname(file), { recursive: true, mode: OWNER_FOLDER }).pipe(
      Effect.mapError(failed)
    )
    const client = yield* SqliteClient.make({ filename: file }).pipe(
      Effect.provide(Reactivity.layer),
      Effect.mapError(failed)
    )
    yield* Effect.promise(() => ownerOnlyDatabase(file))
    return yield* makePlanCache(file, config.traces.fsync).pipe(
      Effect.provideService(SqlClient.SqlClient, client),
      Effect.provideService(SqliteClient.SqliteClient, client)
    )
  }).pipe(
    Effect.catchTag(
      "PlanCacheError",
      (error) => Effect.as(Effect.logWarning(`plans are not reused: ${error.message}`), unavailable(error))
    )
  )
)

/** No plans, nothing kept: for replays, whose turns must take the path they took when recorded. */
export const PlanCacheNone = Layer.succeed(
  PlanCache,
  PlanCache.of({
    lookup: () => Effect.succeed(Option.none()),
    get: () => Effect.succeed(Option.none()),
    list: Effect.succeed([]),
    save: (plan, now) =>
      Effect.succeed({
        ...plan,
        id: planId(plan.request),
        successes: 1,
        failures: 0,
        created_at: now,
        last_used_at: null
      }),
    used: () => Effect.void,
    forget: () => Effect.succeed(false),
    forgetMadeBy: () => Effect.succeed(0)
  })
)
