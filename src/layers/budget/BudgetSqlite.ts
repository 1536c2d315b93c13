import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient, type SqlError } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Cause, Effect, ExecutionStrategy, Exit, Option, Schema, Scope } from "effect"
import type { BudgetDay, BudgetState, HeldReservation } from "../../domain/BudgetLedger.js"
import { freshDay } from "../../domain/BudgetLedger.js"
import { BudgetStoreError, messageOf } from "../../domain/Errors.js"
import { onFirstCall } from "../../domain/OnFirstCall.js"
import { ownerOnlyDatabase } from "../../domain/OwnerOnly.js"
import { makeSqliteDirect, type SqliteDirect } from "../SqliteDirect.js"
import type { BudgetStore } from "./BudgetCore.js"

/**
 * The budget in SQLite, shared by every process of a workspace: each change runs in a `BEGIN IMMEDIATE`
 * transaction (the database's one write lock, taken before reading), so the state a change decides on is the
 * state it writes over, whatever other processes do. Rollback journal, not WAL: a reader creates no file. A
 * writer keeps its journal between transactions (`journal_mode = PERSIST`, the journal's header zeroed at each
 * commit, which is as safe as deleting it): creating and deleting the file on every change was a third of what a
 * priced model call cost.
 */

const SCHEMA_VERSION = 1

const DayRow = Schema.Struct({
  day: Schema.String,
  spent_eur: Schema.Number,
  override_until: Schema.NullOr(Schema.Number),
  soft_notice_given: Schema.Number
})
const ReservationRow = Schema.Struct({ id: Schema.String, eur: Schema.Number, reserved_at: Schema.Number })
const decodeDays = onFirstCall(() => Schema.decodeUnknown(Schema.Array(DayRow)))
const decodeReservations = onFirstCall(() => Schema.decodeUnknown(Schema.Array(ReservationRow)))

/**
 * Runs one statement with its parameters: on the transaction's connection itself (a prepared statement from its
 * cache, no statement compiled and no span per statement), or through the client.
 */
type Run = (
  text: string,
  params: ReadonlyArray<string | number | null>
) => Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError>

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
  | { readonly _tag: "Open"; readonly sql: SqlClient.SqlClient; readonly direct: SqliteDirect }
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
    if (!options.readonly) {
      yield* sql`PRAGMA journal_mode = PERSIST`.pipe(
        Effect.mapError((error) => storeError(file, "cannot set its journal mode")(error))
      )
      yield* Effect.promise(() => ownerOnlyDatabase(file))
    }
    const direct = yield* makeSqliteDirect.pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.provideService(SqliteClient.SqliteClient, sql),
      Effect.mapError((error) => storeError(file, "cannot open")(error))
    )
    return { _tag: "Open", sql, direct } satisfies OpenResult
  })

/**
 * `effect` inside `BEGIN IMMEDIATE ... COMMIT` on the client's one connection (held for the whole transaction),
 * rolled back when it fails; uninterruptible, so that no transaction is left open.
 */
const immediate = <A, E, R, E2>(
  sql: SqlClient.SqlClient,
  effect: (run: Run) => Effect.Effect<A, E, R>,
  onLockError: (error: SqlError.SqlError) => E2,
  onCommitted: () => void = () => undefined
) =>
  Effect.scoped(
    Effect.gen(function*() {
      const conn = yield* Effect.mapError(sql.reserve, onLockError)
      yield* Effect.mapError(conn.executeUnprepared("BEGIN IMMEDIATE", [], undefined), onLockError)
      const run: Run = (text, params) => conn.execute(text, params, undefined)
      const exit = yield* Effect.exit(
        Effect.provideService(effect(run), SqlClient.TransactionConnection, [conn, 0])
      )
      if (Exit.isSuccess(exit)) {
        const committed = yield* Effect.either(conn.executeUnprepared("COMMIT", [], undefined))
        if (committed._tag === "Left") {
          yield* Effect.ignore(conn.executeUnprepared("ROLLBACK", [], undefined))
          return yield* Effect.fail(onLockError(committed.left))
        }
        // Still holding the connection: no other transaction of this client has started.
        onCommitted()
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
    () =>
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

const load = (run: Run, day: string) =>
  Effect.gen(function*() {
    const days = yield* Effect.flatMap(
      run("SELECT day, spent_eur, override_until, soft_notice_given FROM budget_days WHERE day = ?", [day]),
      decodeDays
    )
    const rows = yield* Effect.flatMap(
      run("SELECT id, eur, reserved_at FROM budget_reservations", []),
      decodeReservations
    )
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
const write = (run: Run, before: BudgetState, after: BudgetState, now: number) =>
  Effect.gen(function*() {
    const { today } = after
    if (
      today.spentEur !== before.today.spentEur || today.overrideUntil !== before.today.overrideUntil ||
      today.softNoticeGiven !== before.today.softNoticeGiven
    ) {
      yield* run(
        `INSERT INTO budget_days (day, spent_eur, override_until, soft_notice_given, updated_at)
        VALUES (?, ?, ?, ?, ?) ON CONFLICT (day) DO UPDATE SET spent_eur = excluded.spent_eur,
        override_until = excluded.override_until, soft_notice_given = excluded.soft_notice_given,
        updated_at = excluded.updated_at`,
        [today.day, today.spentEur, today.overrideUntil, today.softNoticeGiven ? 1 : 0, now]
      )
    }
    const kept = new Set(after.reservations.map((r) => r.id))
    const had = new Set(before.reservations.map((r) => r.id))
    for (const gone of before.reservations.filter((r) => !kept.has(r.id))) {
      yield* run("DELETE FROM budget_reservations WHERE id = ?", [gone.id])
    }
    for (const added of after.reservations.filter((r) => !had.has(r.id))) {
      yield* run("INSERT INTO budget_reservations (id, eur, reserved_at) VALUES (?, ?, ?)", [
        added.id,
        added.eur,
        added.at
      ])
    }
  })

/** How long a read is reused before SQLite is asked whether another process committed since. */
const FRESH_MS = 1000

/**
 * Reads see one consistent state (a read transaction), reused while nothing changed it: this store's own changes
 * drop the copy at once, and other processes' commits (SQLite's `data_version`) are looked for once the copy is
 * FRESH_MS old. A status may so lag another process by up to FRESH_MS; every change still decides on the state
 * inside its write transaction. A read-only store refuses every change.
 */
export const makeSqliteStore = (
  sql: SqlClient.SqlClient,
  direct: SqliteDirect,
  file: string,
  now: Effect.Effect<number>,
  options: { readonly readonly: boolean; readonly changed?: () => void }
): BudgetStore => {
  let kept:
    | { readonly version: number; readonly day: string; readonly state: BudgetState; readonly at: number }
    | undefined
  // Bumped by every change of this store: a read that overlapped one does not keep what it read.
  let changes = 0
  // The state this store's last committed change left, with the connection's data_version then (which other
  // connections' commits change, and this one's do not).
  type Committed = { readonly version: number; readonly day: string; readonly state: BudgetState }
  let committed: Committed | undefined
  const dataVersionOf = (run: Run) =>
    Effect.map(run("PRAGMA data_version", []), (rows) => {
      const row = rows[0]
      return typeof row === "object" && row !== null && "data_version" in row && typeof row.data_version === "number"
        ? row.data_version
        : -1
    })
  const viaClient: Run = (text, params) => sql.unsafe(text, params)
  // Read before most statuses and changes: on the connection itself (the transactions below are `exclusive`).
  const dataVersion = dataVersionOf((text, params) => direct.run(sql.unsafe(text, params)))
  const peek = (day: string, at: number): BudgetState | undefined =>
    kept !== undefined && kept.day === day && at >= kept.at && at - kept.at < FRESH_MS ? kept.state : undefined
  const read = (day: string, at: number): Effect.Effect<BudgetState, BudgetStoreError> => {
    const fresh = peek(day, at)
    return fresh !== undefined ? Effect.succeed(fresh) : reload(day, at)
  }

  const reload = (day: string, at: number) =>
    Effect.gen(function*() {
      const version = yield* dataVersion
      if (kept !== undefined && kept.version === version && kept.day === day) {
        kept = { ...kept, at }
        return kept.state
      }
      const before = changes
      const state = yield* direct.exclusive(sql.withTransaction(load(viaClient, day)))
      if (changes === before) kept = { version, day, state, at }
      return state
    }).pipe(Effect.mapError(storeError(file, "cannot read the budget")))

  const update = <A, E>(day: string, f: (state: BudgetState) => Effect.Effect<readonly [A, BudgetState | null], E>) =>
    options.readonly
      ? Effect.fail(
        new BudgetStoreError({ path: file, reason: "ReadOnly", message: "this command only reads the budget" })
      )
      : Effect.suspend(() => {
        let left: Committed | undefined
        return direct.exclusive(immediate(
          sql,
          (run) =>
            Effect.gen(function*() {
              changes++
              kept = undefined
              // Under the write lock: when no other connection committed since this store's last change, the state
              // it left is the database's, and is not read again.
              const version = yield* dataVersionOf(run).pipe(
                Effect.mapError(storeError(file, "cannot read the budget"))
              )
              const mine = committed
              committed = undefined
              const before = mine !== undefined && mine.version === version && mine.day === day
                ? mine.state
                : yield* load(run, day).pipe(Effect.mapError(storeError(file, "cannot read the budget")))
              const [result, after] = yield* f(before)
              if (after !== null) {
                yield* write(run, before, after, yield* now).pipe(
                  Effect.mapError(storeError(file, "cannot write the budget"))
                )
              }
              // Kept only once the transaction commits; a failure leaves nothing kept.
              left = { version, day, state: after ?? before }
              return result
            }),
          storeError(file, "cannot lock the budget"),
          () => {
            committed = left
          }
        )).pipe(
          Effect.ensuring(Effect.sync(() => {
            changes++
            // What this change committed is what the next read gets, once it has checked (one PRAGMA) that no
            // other connection committed since: kept, but not fresh.
            kept = left !== undefined && committed === left ? { ...left, at: Number.NEGATIVE_INFINITY } : undefined
            options.changed?.()
          }))
        )
      })

  return { read, peek, update }
}
