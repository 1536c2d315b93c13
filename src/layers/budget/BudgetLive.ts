import { Clock, Context, Effect, Layer } from "effect"
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import type { AppConfig } from "../../domain/AppConfig.js"
import { type BudgetDay, type BudgetSettings, freshDay } from "../../domain/BudgetLedger.js"
import { BudgetStoreError, messageOf } from "../../domain/Errors.js"
import { OWNER_FOLDER } from "../../domain/OwnerOnly.js"
import { withShippedPrices } from "../../domain/ShippedPrices.js"
import { isoAt, localDay } from "../../domain/Time.js"
import { AuditLog } from "../../services/AuditLog.js"
import { Budget } from "../../services/Budget.js"
import { MyclawConfig } from "../../services/MyclawConfig.js"
import { Workspace } from "../../services/Workspace.js"
import { type BudgetCore, budgetService, makeBudgetCore, makeMemoryStore } from "./BudgetCore.js"
import { loadBudgetFile } from "./BudgetFile.js"
import { initBudgetDatabase, makeSqliteStore, openBudgetDatabase } from "./BudgetSqlite.js"

/** The budget's settings from the configuration: a reservation is stale once no call attempt can still be running. */
export const budgetSettings = (config: AppConfig): BudgetSettings => ({
  ...config.budget,
  usdToEur: config.usdToEur,
  pricing: withShippedPrices(config.pricing),
  staleAfterMs: config.timeouts.llmMs + 60_000
})

/** Where the budget lives in a workspace, and where earlier versions kept it. */
export const budgetFiles = (root: string) => ({
  database: NodePath.join(root, ".state", "budget.sqlite"),
  legacyJson: NodePath.join(root, ".audit", "budget.json")
})

/**
 * Today's counters from the audit log: the settled cost of today's traces and of the paid calls made outside a
 * turn (`llm_call`), and today's override, if any.
 */
const rebuildFromAudit = (settings: BudgetSettings, day: string, now: number) =>
  Effect.gen(function*() {
    const audit = yield* AuditLog
    const since = now - 36 * 3600 * 1000
    const traces = yield* audit.query({ kind: "trace", since, limit: 1_000_000 })
    const calls = yield* audit.query({ kind: "llm_call", since, limit: 1_000_000 })
    const overrides = yield* audit.query({ kind: "budget_override", since, limit: 1_000 })
    const today = <R extends { readonly at: string }>(records: ReadonlyArray<R>) =>
      records.filter((record) => localDay(Date.parse(record.at), settings.timeZone) === day)
    const spentUsd = [...today(traces), ...today(calls)].reduce(
      (total, record) => total + ("cost_usd" in record ? record.cost_usd : 0),
      0
    )
    // The override in force is the one set last (a later one may have shortened it), not the one that lasts longest.
    const latest = today(overrides).reduce<(typeof overrides)[number] | undefined>(
      (last, record) => (last === undefined || Date.parse(record.at) >= Date.parse(last.at) ? record : last),
      undefined
    )
    const override = latest !== undefined && "until" in latest ? Date.parse(latest.until) : undefined
    const counters: BudgetDay = {
      ...freshDay(day),
      spentEur: spentUsd * settings.usdToEur,
      overrideUntil: override ?? null
    }
    return { counters, records: today(traces).length }
  })

/** The first state of a budget with no database: budget.json's counters if it has today's, else the audit log's. */
const seedCounters = (settings: BudgetSettings, files: ReturnType<typeof budgetFiles>, why: string | null) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const day = localDay(now, settings.timeZone)
    const legacy = yield* loadBudgetFile(files.legacyJson)
    if (legacy._tag === "Loaded" && legacy.day.day === day) {
      return {
        today: { ...legacy.day, spentEur: legacy.day.spentEur + legacy.inFlightEur },
        origin: `imported from budget.json at ${isoAt(now)}`,
        imported: true,
        note: `budget: today's counters imported from ${files.legacyJson} (${legacy.day.spentEur.toFixed(4)} EUR spent${
          legacy.inFlightEur > 0
            ? `, ${legacy.inFlightEur.toFixed(4)} EUR of calls that never settled counted as spent`
            : ""
        })`,
        warn: false
      }
    }
    const rebuilt = yield* rebuildFromAudit(settings, day, now).pipe(
      Effect.orElseSucceed(() => ({ counters: freshDay(day), records: -1 }))
    )
    const what = why ?? (legacy._tag === "Corrupt" ? `${files.legacyJson} is corrupt (${legacy.detail})` : null)
    const note = rebuilt.records < 0
      ? `budget: ${what ?? "new budget store"} and the audit log could not be read: today's counters start at 0`
      : rebuilt.records === 0 && what === null
      ? `budget: new budget store at ${files.database}`
      : `budget: ${what ?? "new budget store"}: today's counters rebuilt from ${rebuilt.records} trace records (${
        rebuilt.counters.spentEur.toFixed(4)
      } EUR spent)`
    return {
      today: rebuilt.counters,
      origin: `rebuilt from ${rebuilt.records} audit records at ${isoAt(now)}`,
      imported: legacy._tag === "Loaded",
      note,
      warn: what !== null || rebuilt.records !== 0
    }
  })

const logNote = (seed: { readonly note: string; readonly warn: boolean }) =>
  seed.warn ? Effect.logWarning(seed.note) : Effect.logInfo(seed.note)

/** A file operation of the budget store; a failure names the file, the system's code and what was attempted. */
const io = (path: string, what: string, run: () => Promise<unknown>) =>
  Effect.tryPromise({
    try: run,
    catch: (cause) =>
      new BudgetStoreError({
        path,
        reason: "Io",
        message: `${what}: ${messageOf(cause)}`,
        cause
      })
  })

/** A stopped process's calls, found at start: said once, counted as spent. */
const sweepAtStart = (core: BudgetCore) =>
  Effect.flatMap(core.sweep, ({ count, eur }) =>
    count === 0
      ? Effect.void
      : Effect.logWarning(
        `budget: ${count} calls left in flight by a stopped process counted as spent (${eur.toFixed(4)} EUR)`
      )).pipe(Effect.catchTag("BudgetStoreError", (error) => Effect.logError(`budget: ${error.message}`)))

/**
 * How the budget database is made durable, following the audit log's `fsync`, the durability every record of
 * spending already has: under `always`, SQLite syncs every transaction (two per model call); under `batch`,
 * no transaction waits for the disk and the file is synced within `syncEveryMs` of a change. A crash of
 * myclaw loses nothing either way (the system holds what was written); a power loss under `batch` may lose the
 * last changes or leave the file corrupt, and a corrupt database is moved aside and rebuilt from the audit log.
 */
export const budgetDurability = (config: AppConfig) =>
  config.audit.fsync === "always"
    ? { synchronous: "FULL", syncEveryMs: null }
    : { synchronous: "OFF", syncEveryMs: 200 } as const

const syncFile = async (file: string) => {
  const handle = await NodeFs.open(file, "r")
  try {
    await handle.datasync()
  } finally {
    await handle.close()
  }
}

/**
 * The budget in `<workspace>/.state/budget.sqlite`, shared by every process of the workspace (the service, CLI
 * turns, the digest): every change is one write transaction, so the hard cap holds across them. A new database
 * starts from budget.json's counters when it holds today's (the file is then renamed `budget.json.imported`),
 * else from the day's audit records; a corrupt database is moved aside and rebuilt the same way.
 */
export const BudgetLive = Layer.scoped(
  Budget,
  Effect.gen(function*() {
    const { config } = yield* MyclawConfig
    const workspace = yield* Workspace
    const audit = yield* AuditLog
    const settings = budgetSettings(config)
    const files = budgetFiles(workspace.root)
    const scope = yield* Effect.scope
    yield* io(
      files.database,
      "cannot create its folder",
      () => NodeFs.mkdir(NodePath.dirname(files.database), { recursive: true, mode: OWNER_FOLDER })
    )
    let opened = yield* openBudgetDatabase(files.database, { readonly: false }, scope)
    let why: string | null = null
    if (opened._tag === "Corrupt") {
      const aside = `${files.database}.corrupt-${isoAt(yield* Clock.currentTimeMillis).replace(/[:.]/g, "-")}`
      yield* io(
        files.database,
        `cannot move the corrupt database aside to ${aside}`,
        () => NodeFs.rename(files.database, aside)
      )
      why = `${files.database} was corrupt (${opened.detail}), moved to ${NodePath.basename(aside)}`
      opened = yield* openBudgetDatabase(files.database, { readonly: false }, scope)
    }
    if (opened._tag === "Corrupt") return yield* Effect.dieMessage(`${files.database} is corrupt: ${opened.detail}`)
    const { sql } = opened
    const [version] = yield* Effect.orDie(sql<{ user_version: number }>`PRAGMA user_version`)
    if ((version?.user_version ?? 0) === 0) {
      const seed = yield* Effect.provideService(seedCounters(settings, files, why), AuditLog, audit)
      // Like every transaction on this client, exclusive of the statements run on its connection.
      const created = yield* opened.direct.exclusive(initBudgetDatabase(
        sql,
        files.database,
        Effect.succeed(seed),
        yield* Clock.currentTimeMillis
      ))
      if (created) {
        yield* logNote(seed)
        if (seed.imported) {
          yield* Effect.tryPromise(() => NodeFs.rename(files.legacyJson, `${files.legacyJson}.imported`)).pipe(
            Effect.catchAll((error) =>
              Effect.logWarning(`budget: cannot rename ${files.legacyJson}: ${messageOf(error)}`)
            )
          )
        }
      }
    }
    const durability = budgetDurability(config)
    let unsynced = false
    if (durability.syncEveryMs !== null) {
      yield* Effect.orDie(sql.unsafe(`PRAGMA synchronous = ${durability.synchronous}`))
      const syncNow = Effect.suspend(() => {
        if (!unsynced) return Effect.void
        unsynced = false
        return io(files.database, "cannot sync", () => syncFile(files.database)).pipe(
          Effect.catchAll((error) => Effect.logError(`budget: ${error.message}`))
        )
      })
      yield* Effect.addFinalizer(() => syncNow)
      yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(durability.syncEveryMs), syncNow)))
    }
    const core = yield* makeBudgetCore(
      settings,
      makeSqliteStore(sql, opened.direct, files.database, Clock.currentTimeMillis, {
        readonly: false,
        changed: () => {
          unsynced = true
        }
      }),
      `${process.pid}.${NodeCrypto.randomBytes(4).toString("hex")}:`
    )
    yield* sweepAtStart(core)
    const override = (request: { readonly until: number; readonly reason: string; readonly sender: string }) =>
      Effect.gen(function*() {
        const at = yield* Clock.currentTimeMillis
        yield* audit.append({
          kind: "budget_override",
          at: isoAt(at),
          sender: request.sender,
          until: isoAt(request.until),
          reason: request.reason
        })
        yield* Effect.orDie(core.setOverride(request.until))
      })
    return budgetService(core, override)
  })
)

/**
 * The budget as read-only commands see it: the database opened read-only, or, when there is none yet, the
 * counters it would start from, computed in memory from the audit log, which `auditLog` builds only then (a
 * command that finds the database neither loads nor opens the audit log). Nothing is created or written; every
 * change is refused.
 */
export const makeBudgetReadOnly = <E, R>(auditLog: Layer.Layer<AuditLog, E, R>) =>
  Layer.scoped(
    Budget,
    Effect.gen(function*() {
      const { config } = yield* MyclawConfig
      const workspace = yield* Workspace
      const settings = budgetSettings(config)
      const files = budgetFiles(workspace.root)
      const scope = yield* Effect.scope
      const exists = yield* Effect.promise(() => NodeFs.access(files.database).then(() => true, () => false))
      const opened = exists ? yield* openBudgetDatabase(files.database, { readonly: true }, scope) : null
      const refuse = Effect.dieMessage("the budget is read-only in this command")
      if (opened?._tag === "Open") {
        const [version] = yield* Effect.orDie(opened.sql<{ user_version: number }>`PRAGMA user_version`)
        if ((version?.user_version ?? 0) > 0) {
          const core = yield* makeBudgetCore(
            settings,
            makeSqliteStore(opened.sql, opened.direct, files.database, Clock.currentTimeMillis, { readonly: true })
          )
          return budgetService(core, () => refuse)
        }
      }
      const why = opened?._tag === "Corrupt" ? `${files.database} is corrupt (${opened.detail})` : null
      const audit = Context.get(yield* Layer.buildWithScope(auditLog, scope), AuditLog)
      const seed = yield* Effect.provideService(seedCounters(settings, files, why), AuditLog, audit)
      if (seed.warn) yield* Effect.logWarning(seed.note)
      const store = yield* makeMemoryStore({ days: { [seed.today.day]: seed.today }, reservations: [] })
      const core = yield* makeBudgetCore(settings, store)
      return budgetService(core, () => refuse)
    })
  )

/** The read-only budget over the audit log the context holds. */
export const BudgetReadOnly = makeBudgetReadOnly(Layer.effect(AuditLog, AuditLog))
