import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient, type SqlError } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Cause, Effect, ExecutionStrategy, Exit, Option, Schema, Scope } from "effect"
import type { BudgetDay, BudgetState, HeldReservation } from "../../domain/BudgetLedger.js"
import { freshDay } from "../../domain/BudgetLedger.js"
import { BudgetStoreError, messageOf } from "../../domain/Errors.js"
import type { BudgetStore } from "./BudgetCore.js"

/**
 * The budget in SQLite, shared by every process of a workspace: each change runs in a `BEGIN IMMEDIATE`
 * transaction (the database's one write lock, taken before reading), so the state a change decides on is the
 * state it writes over, whatever other processes do. Rollback journal, not WAL: a reader creates no file.
 */

const SCHEMA_VERSION = 1

const DayRow = Schema.Struct({
  day: Schema.String,
  spent_eur: Schema.Number,
  override_until: Schema.NullOr(Schema.Number),
  soft_notice_given: Schema.Number
})
const ReservationRow = Schema.Struct({ id: Schema.String, eur: Schema.Number, reserved_at: Schema.Number })
const decodeDays = Schema.decodeUnknown(Schema.Array(DayRow))
const decodeReservations = Schema.decodeUnknown(Schema.Array(ReservationRow))

const storeError = (file: string, what: string) => (cause: SqlError.SqlError | unknown) =>
  new BudgetStoreError({
    path: file,
    reason: "Io",
    message: `${what}: ${messageOf(cause instanceof Error && "cause" in cause ? cause.cause : cause)}`,
    cause
  })

/** The SQLite error code of a failure to open (thrown while the client is made), if it is one. */
const sqliteCode = (cause: Cause.Cause<unknown>): string | undefined => {
  const defect = Option.getOrUndefined(Cause.dieOption(cause))
  return typeof defect === "object" && defect !== null && "code" in defect ? String(defect.code) : undefined
}

export type OpenResult =
  | { readonly _tag: "Open"; readonly sql: SqlClient.SqlClient }
  | { readonly _tag: "Corrupt"; readonly detail: string }

/**
 * A client on `file` in a scope of its own (closed with `scope`); a file that is not a sound database is
 * reported as `Corrupt`, the client already closed.
 */
export const openBudgetDatabase = (file: string, options: { readonly readonly: boolean }, scope: Scope.Scope) =>
  Effect.gen(function*() {
    const own = yield* Scope.fork(scope, ExecutionStrategy.sequential)
    const opened = yield* SqliteClient.make({ filename: file, readonly: options.readonly, disableWAL: true }).pipe(
      Effect.provide(Reactivity.layer),
      Scope.extend(own),
      Effect.exit
    )
    if (Exit.isFailure(opened)) {
      yield* Scope.close(own, Exit.void)
      const code = sqliteCode(opened.cause)
      if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT") {
        return { _tag: "Corrupt", detail: code } satisfies OpenResult
      }
      return yield* new BudgetStoreError({
        path: file,
        reason: "Io",
        message: `cannot open: ${Cause.pretty(opened.cause).split("\n")[0]}`,
        cause: Cause.squash(opened.cause)
      })
    }
    const sql = opened.value
    const check = yield* sql<{ quick_check: string }>`PRAGMA quick_check`.pipe(Effect.either)
    const verdict = check._tag === "Right" ? check.right[0]?.quick_check : messageOf(check.left.cause)
    if (verdict !== "ok") {
      yield* Scope.close(own, Exit.void)
      return { _tag: "Corrupt", detail: verdict ?? "no answer to quick_check" } satisfies OpenResult
    }
    return { _tag: "Open", sql } satisfies OpenResult
  })

/**
 * `effect` inside `BEGIN IMMEDIATE ... COMMIT` on the client's one connection (held for the whole transaction),
 * rolled back when it fails; uninterruptible, so that no transaction is left open.
 */
const immediate = <A, E, R, E2>(
  sql: SqlClient.SqlClient,
  effect: Effect.Effect<A, E, R>,
  onLockError: (error: SqlError.SqlError) => E2
) =>
  Effect.scoped(
    Effect.gen(function*() {
      const conn = yield* Effect.mapError(sql.reserve, onLockError)
      yield* Effect.mapError(conn.executeUnprepared("BEGIN IMMEDIATE", [], undefined), onLockError)
      const exit = yield* Effect.exit(Effect.provideService(effect, SqlClient.TransactionConnection, [conn, 0]))
      if (Exit.isSuccess(exit)) {
        const committed = yield* Effect.either(conn.executeUnprepared("COMMIT", [], undefined))
        if (committed._tag === "Left") {
          yield* Effect.ignore(conn.executeUnprepared("ROLLBACK", [], undefined))
          return yield* Effect.fail(onLockError(committed.left))
        }
        return exit.value
      }
      yield* Effect.ignore(conn.executeUnprepared("ROLLBACK", [], undefined))
      return yield* exit
    })
  ).pipe(Effect.uninterruptible)

/** Creates the tables (once, whoever comes first) and stores `seed` as the first state of a new database. */
export const initBudgetDatabase = (
  sql: SqlClient.SqlClient,
  file: string,
  seed: Effect.Effect<{ readonly today: BudgetDay; readonly origin: string }>,
  now: number
) =>
  immediate(
    sql,
    Effect.gen(function*() {
      const [version] = yield* sql<{ user_version: number }>`PRAGMA user_version`
      if ((version?.user_version ?? 0) >= SCHEMA_VERSION) return false
      yield* sql`CREATE TABLE IF NOT EXISTS budget_days (
        day TEXT PRIMARY KEY,
        spent_eur REAL NOT NULL CHECK (spent_eur >= 0),
        override_until INTEGER,
        soft_notice_given INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      )`
      yield* sql`CREATE TABLE IF NOT EXISTS budget_reservations (
        id TEXT PRIMARY KEY,
        eur REAL NOT NULL CHECK (eur >= 0),
        reserved_at INTEGER NOT NULL
      )`
      yield* sql`CREATE TABLE IF NOT EXISTS budget_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`
      const { today, origin } = yield* seed
      yield* sql`INSERT OR REPLACE INTO budget_days ${
        sql.insert({
          day: today.day,
          spent_eur: today.spentEur,
          override_until: today.overrideUntil,
          soft_notice_given: today.softNoticeGiven ? 1 : 0,
          updated_at: now
        })
      }`
      yield* sql`INSERT OR REPLACE INTO budget_meta ${sql.insert({ key: "origin", value: origin })}`
      yield* sql.unsafe(`PRAGMA user_version = ${SCHEMA_VERSION}`)
      return true
    }),
    storeError(file, "cannot lock the budget")
  ).pipe(
    Effect.catchTag("SqlError", (error) => Effect.fail(storeError(file, "cannot create the budget tables")(error)))
  )

const load = (sql: SqlClient.SqlClient, day: string) =>
  Effect.gen(function*() {
    const days = yield* Effect.flatMap(sql`SELECT * FROM budget_days WHERE day = ${day}`, decodeDays)
    const rows = yield* Effect.flatMap(sql`SELECT id, eur, reserved_at FROM budget_reservations`, decodeReservations)
    const found = days[0]
    const today: BudgetDay = found === undefined ? freshDay(day) : {
      day,
      spentEur: found.spent_eur,
      overrideUntil: found.override_until,
      softNoticeGiven: found.soft_notice_given !== 0
    }
    return {
      today,
      reservations: rows.map((row): HeldReservation => ({ id: row.id, eur: row.eur, at: row.reserved_at }))
    } satisfies BudgetState
  })

/** Writes what changed between `before` and `after`: the day's row, reservations added and removed. */
const write = (sql: SqlClient.SqlClient, before: BudgetState, after: BudgetState, now: number) =>
  Effect.gen(function*() {
    const { today } = after
    if (
      today.spentEur !== before.today.spentEur || today.overrideUntil !== before.today.overrideUntil ||
      today.softNoticeGiven !== before.today.softNoticeGiven
    ) {
      yield* sql`INSERT INTO budget_days ${
        sql.insert({
          day: today.day,
          spent_eur: today.spentEur,
          override_until: today.overrideUntil,
          soft_notice_given: today.softNoticeGiven ? 1 : 0,
          updated_at: now
        })
      } ON CONFLICT (day) DO UPDATE SET spent_eur = excluded.spent_eur, override_until = excluded.override_until,
        soft_notice_given = excluded.soft_notice_given, updated_at = excluded.updated_at`
    }
    const kept = new Set(after.reservations.map((r) => r.id))
    const had = new Set(before.reservations.map((r) => r.id))
    for (const gone of before.reservations.filter((r) => !kept.has(r.id))) {
      yield* sql`DELETE FROM budget_reservations WHERE id = ${gone.id}`
    }
    for (const added of after.reservations.filter((r) => !had.has(r.id))) {
      yield* sql`INSERT INTO budget_reservations ${sql.insert({ id: added.id, eur: added.eur, reserved_at: added.at })}`
    }
  })

/** Reads see one consistent state (a read transaction); a read-only store refuses every change. */
export const makeSqliteStore = (
  sql: SqlClient.SqlClient,
  file: string,
  now: Effect.Effect<number>,
  options: { readonly readonly: boolean }
): BudgetStore => ({
  read: (day) => sql.withTransaction(load(sql, day)).pipe(Effect.mapError(storeError(file, "cannot read the budget"))),
  update: <A, E>(day: string, f: (state: BudgetState) => Effect.Effect<readonly [A, BudgetState | null], E>) =>
    options.readonly
      ? Effect.fail(
        new BudgetStoreError({ path: file, reason: "ReadOnly", message: "this command only reads the budget" })
      )
      : immediate(
        sql,
        Effect.gen(function*() {
          const before = yield* load(sql, day).pipe(Effect.mapError(storeError(file, "cannot read the budget")))
          const [result, after] = yield* f(before)
          if (after !== null) {
            yield* write(sql, before, after, yield* now).pipe(
              Effect.mapError(storeError(file, "cannot write the budget"))
            )
          }
          return result
        }),
        storeError(file, "cannot lock the budget")
      )
})
