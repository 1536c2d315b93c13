import { Clock, Effect, Layer } from "effect"
import * as NodePath from "node:path"
import { localDay } from "../../domain/Time.js"
import { isoAt } from "../../domain/Time.js"
import { AuditLog } from "../../services/AuditLog.js"
import { Budget } from "../../services/Budget.js"
import { MyclawConfig } from "../../services/MyclawConfig.js"
import { Workspace } from "../../services/Workspace.js"
import { budgetService, type BudgetSettings, type BudgetState, freshDay, makeBudgetCore } from "./BudgetCore.js"
import { loadBudgetFile, saveBudgetFile } from "./BudgetFile.js"

/** Today's counters from the audit log: the settled cost of today's traces and today's override, if any. */
const rebuildFromAudit = (settings: BudgetSettings, day: string, now: number) =>
  Effect.gen(function*() {
    const audit = yield* AuditLog
    const since = now - 36 * 3600 * 1000
    const traces = yield* audit.query({ kind: "trace", since, limit: 1_000_000 })
    const overrides = yield* audit.query({ kind: "budget_override", since, limit: 1_000 })
    const today = <R extends { readonly at: string }>(records: ReadonlyArray<R>) =>
      records.filter((record) => localDay(Date.parse(record.at), settings.timeZone) === day)
    const spentUsd = today(traces).reduce((total, record) => total + ("cost_usd" in record ? record.cost_usd : 0), 0)
    const override = today(overrides).map((record) => ("until" in record ? Date.parse(record.until) : 0)).sort().at(-1)
    const state: BudgetState = {
      ...freshDay(day),
      spentEur: spentUsd * settings.usdToEur,
      overrideUntil: override ?? null
    }
    return { state, records: today(traces).length }
  })

/**
 * The budget in `<workspace>/.audit/budget.json`, written atomically on every change that moves money. A
 * missing or corrupt file is reported and rebuilt from the day's audit records, never silently zeroed;
 * reservations left by a crash count as spent.
 */
export const BudgetLive = Layer.effect(
  Budget,
  Effect.gen(function*() {
    const { config } = yield* MyclawConfig
    const workspace = yield* Workspace
    const audit = yield* AuditLog
    const settings: BudgetSettings = { ...config.budget, usdToEur: config.usdToEur, pricing: config.pricing }
    const file = NodePath.join(workspace.root, ".audit", "budget.json")
    const now = yield* Clock.currentTimeMillis
    const today = localDay(now, settings.timeZone)
    const loaded = yield* loadBudgetFile(file)
    let initial: BudgetState
    if (loaded._tag === "Loaded") {
      const inFlight = Object.values(loaded.state.reservations).reduce((total, eur) => total + eur, 0)
      if (inFlight > 0) {
        yield* Effect.logWarning(
          `budget.json holds ${inFlight.toFixed(4)} EUR of calls that never settled (a crash?): counted as spent`
        )
      }
      initial = loaded.state.day === today
        ? { ...loaded.state, spentEur: loaded.state.spentEur + inFlight, reservations: {} }
        : freshDay(today)
    } else {
      const rebuilt = yield* Effect.provideService(rebuildFromAudit(settings, today, now), AuditLog, audit).pipe(
        Effect.orElseSucceed(() => ({ state: freshDay(today), records: -1 }))
      )
      const why = loaded._tag === "Missing" ? "is missing" : `is corrupt (${loaded.detail})`
      yield* Effect.logWarning(
        rebuilt.records < 0
          ? `${file} ${why} and the audit log could not be read: starting today's counters at 0`
          : `${file} ${why}: rebuilt from ${rebuilt.records} trace records of today (${
            rebuilt.state.spentEur.toFixed(4)
          } EUR spent)`
      )
      initial = rebuilt.state
    }
    const save = (state: BudgetState) =>
      Effect.flatMap(Clock.currentTimeMillis, (at) => saveBudgetFile(file, settings.timeZone, state, at)).pipe(
        Effect.catchAll((error) => Effect.logError(`cannot write ${file}: ${String(error)}`))
      )
    yield* save(initial)
    const core = yield* makeBudgetCore(settings, initial, save)
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
        yield* core.setOverride(request.until)
      })
    return budgetService(core, override)
  })
)
