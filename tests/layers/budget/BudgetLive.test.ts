import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Schema, TestClock } from "effect"
import * as NodePath from "node:path"
import { AppConfig } from "../../../src/domain/AppConfig.js"
import { AuditLogMemory, makeAuditLogMemory } from "../../../src/layers/audit/AuditLogMemory.js"
import { BudgetLive } from "../../../src/layers/budget/BudgetLive.js"
import { IdGeneratorLive } from "../../../src/layers/ids/IdGeneratorLive.js"
import { MyclawConfigFixed } from "../../../src/layers/MyclawConfigLive.js"
import { makeWorkspace } from "../../../src/layers/workspace/WorkspaceLive.js"
import { AuditLog } from "../../../src/services/AuditLog.js"
import { Budget } from "../../../src/services/Budget.js"
import { Workspace } from "../../../src/services/Workspace.js"

const config = (budget: object = {}) =>
  Schema.decodeUnknownSync(AppConfig)({
    budget: { softCapEur: 1, hardCapEur: 2, timeZone: "Europe/Rome", ...budget },
    usdToEur: 1,
    pricing: { "m": { inputPerMTok: 1_000_000, cachedInputPerMTok: 0, outputPerMTok: 0 } }
  })

/** BudgetLive over the workspace at `home`, with its own audit log unless one is given. */
const budgetAt = (home: string, audit: Layer.Layer<AuditLog> = AuditLogMemory, budget: object = {}) =>
  BudgetLive.pipe(
    Layer.provideMerge(Layer.mergeAll(
      MyclawConfigFixed(config(budget)),
      Layer.effect(Workspace, makeWorkspace(home)).pipe(Layer.provide(NodeContext.layer)),
      audit,
      IdGeneratorLive
    ))
  )

const withHome = <A, E, R>(f: (home: string) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    return yield* f(yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-budget-" }))
  }).pipe(Effect.provide(NodeContext.layer), Logger.withMinimumLogLevel(LogLevel.None))

/** One call of `eur` (the model costs 1 EUR per input token here). */
const spend = (eur: number) =>
  Effect.flatMap(
    Budget,
    (budget) =>
      Effect.flatMap(budget.reserve({ model: "m", inputTokens: eur, maxOutputTokens: 0 }), (r) => budget.settle(r, eur))
  )

describe("BudgetLive", () => {
  it.scoped("levels follow the caps; a call that would pass the hard cap is refused before it is made", () =>
    withHome((home) =>
      Effect.gen(function*() {
        const budget = yield* Budget
        assert.strictEqual((yield* budget.status).level, "ok")
        yield* spend(1)
        const soft = yield* budget.status
        assert.strictEqual(soft.level, "soft")
        assert.isTrue(soft.softNoticePending)
        yield* budget.softNoticeGiven
        assert.isFalse((yield* budget.status).softNoticePending)
        const refused = yield* Effect.flip(budget.reserve({ model: "m", inputTokens: 1.5, maxOutputTokens: 0 }))
        assert.strictEqual(refused._tag, "BudgetExceeded")
        yield* spend(1)
        assert.strictEqual((yield* budget.status).level, "hard")
      }).pipe(Effect.provide(budgetAt(home)))
    ))

  it.scoped("many sessions reserving at once never pass the hard cap together", () =>
    withHome((home) =>
      Effect.gen(function*() {
        const budget = yield* Budget
        const results = yield* Effect.forEach(
          Array.from({ length: 50 }, (_, i) => i),
          () => Effect.either(budget.reserve({ model: "m", inputTokens: 0.3, maxOutputTokens: 0 })),
          { concurrency: "unbounded" }
        )
        const granted = results.filter((r) => r._tag === "Right")
        assert.strictEqual(granted.length, 6)
        yield* Effect.forEach(granted, (r) => (r._tag === "Right" ? budget.settle(r.right, 0.3) : Effect.void))
        const status = yield* budget.status
        assert.isAtMost(status.spentEur, 2 + 1e-9)
      }).pipe(Effect.provide(budgetAt(home)))
    ))

  it.scoped("counters and reservations survive a restart; a reservation left by a crash counts as spent", () =>
    withHome((home) =>
      Effect.gen(function*() {
        yield* spend(0.5).pipe(Effect.provide(budgetAt(home)))
        yield* Effect.flatMap(Budget, (b) => b.reserve({ model: "m", inputTokens: 0.25, maxOutputTokens: 0 }))
          .pipe(Effect.provide(budgetAt(home)))
        const after = yield* Effect.flatMap(Budget, (b) => b.status).pipe(Effect.provide(budgetAt(home)))
        assert.closeTo(after.spentEur, 0.75, 1e-9)
        assert.strictEqual(after.reservedEur, 0)
      })
    ))

  it.scoped("counters reset at midnight in the configured zone, not UTC's", () =>
    withHome((home) =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.UTC(2026, 6, 1, 21, 30))
        yield* Effect.gen(function*() {
          const budget = yield* Budget
          yield* spend(1.5)
          assert.strictEqual((yield* budget.status).day, "2026-07-01")
          yield* TestClock.setTime(Date.UTC(2026, 6, 1, 21, 59))
          assert.closeTo((yield* budget.status).spentEur, 1.5, 1e-9)
          yield* TestClock.setTime(Date.UTC(2026, 6, 1, 22, 0))
          const next = yield* budget.status
          assert.strictEqual(next.day, "2026-07-02")
          assert.strictEqual(next.spentEur, 0)
          assert.strictEqual(next.resetsAt, Date.UTC(2026, 6, 2, 22, 0))
        }).pipe(Effect.provide(budgetAt(home)))
      })
    ))

  it.scoped("a corrupt budget.json is rebuilt from the day's audit records, not zeroed", () =>
    withHome((home) =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.UTC(2026, 6, 1, 12, 0))
        const audit = yield* makeAuditLogMemory()
        for (
          const [at, cost] of [["2026-07-01T08:00:00.000Z", 0.4], ["2026-07-01T09:00:00.000Z", 0.35], [
            "2026-06-30T09:00:00.000Z",
            9
          ]] as const
        ) {
          yield* audit.append({
            kind: "trace",
            at,
            trace_id: at,
            session_id: "s",
            channel: "cli",
            sender: "cli:me",
            started_at: at,
            finished_at: at,
            user_message: "x",
            final_response: "y",
            steps_count: 1,
            tool_calls: [],
            cost_usd: cost,
            wall_time_ms: 1,
            outcome: "success",
            approvals_requested: 0,
            approvals_granted: 0
          })
        }
        const fs = yield* FileSystem.FileSystem
        yield* fs.makeDirectory(NodePath.join(home, ".audit"), { recursive: true })
        yield* fs.writeFileString(NodePath.join(home, ".audit", "budget.json"), "{ not json")
        const status = yield* Effect.flatMap(Budget, (b) => b.status).pipe(
          Effect.provide(budgetAt(home, Layer.succeed(AuditLog, audit)))
        )
        assert.closeTo(status.spentEur, 0.75, 1e-9)
        const rewritten = JSON.parse(yield* fs.readFileString(NodePath.join(home, ".audit", "budget.json")))
        assert.closeTo(rewritten.spent_eur, 0.75, 1e-9)
      })
    ))

  it.scoped("an override lifts the hard cap until the given time and is an audit record; without the audit, nothing", () =>
    withHome((home) =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.UTC(2026, 6, 1, 10, 0))
        const audit = yield* makeAuditLogMemory()
        yield* Effect.gen(function*() {
          const budget = yield* Budget
          yield* spend(2)
          assert.strictEqual((yield* budget.status).level, "hard")
          yield* budget.override({ until: Date.UTC(2026, 6, 1, 21, 59), reason: "deadline", sender: "cli:me" })
          assert.strictEqual((yield* budget.status).level, "soft")
          yield* spend(1)
          yield* TestClock.setTime(Date.UTC(2026, 6, 1, 21, 59))
          assert.strictEqual((yield* budget.status).level, "hard")
        }).pipe(Effect.provide(budgetAt(home, Layer.succeed(AuditLog, audit))))
        const [record] = yield* audit.query({ kind: "budget_override", limit: 10 })
        assert.deepInclude(record, { kind: "budget_override", reason: "deadline", until: "2026-07-01T21:59:00.000Z" })

        const broken = yield* makeAuditLogMemory({ fail: true })
        const refused = yield* Effect.gen(function*() {
          const budget = yield* Budget
          const error = yield* Effect.flip(
            budget.override({ until: Date.UTC(2026, 6, 1, 23, 0), reason: "x", sender: "cli:me" })
          )
          return [error._tag, (yield* budget.status).overrideUntil] as const
        }).pipe(Effect.provide(budgetAt(home, Layer.succeed(AuditLog, broken))))
        assert.deepStrictEqual(refused, ["AuditError", null])
      })
    ))
})
