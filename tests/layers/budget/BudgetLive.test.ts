import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Clock, Context, Effect, Layer, Logger, LogLevel, Schema, TestClock } from "effect"
import * as NodeChildProcess from "node:child_process"
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

const config = (budget: object = {}, rest: object = {}) =>
  Schema.decodeUnknownSync(AppConfig)({
    ...rest,
    budget: { softCapEur: 1, hardCapEur: 2, timeZone: "Europe/Rome", ...budget },
    usdToEur: 1,
    pricing: { "m": { inputPerMTok: 1_000_000, cachedInputPerMTok: 0, outputPerMTok: 0 } }
  })

/** BudgetLive over the workspace at `home`, with its own audit log unless one is given. */
const budgetAt = (
  home: string,
  audit: Layer.Layer<AuditLog> = AuditLogMemory,
  budget: object = {},
  rest: object = {}
) =>
  BudgetLive.pipe(
    Layer.provideMerge(Layer.mergeAll(
      MyclawConfigFixed(config(budget, rest)),
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

/** An audit log with three traces: two of 2026-07-01 in Rome (0.75 USD together), one of the day before. */
const auditWithTraces = Effect.gen(function*() {
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
  return audit
})

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

  it.scoped("counters and reservations survive a restart; a reservation left by a stopped process ends as spent", () =>
    withHome((home) =>
      Effect.gen(function*() {
        yield* spend(0.5).pipe(Effect.provide(budgetAt(home)))
        yield* Effect.flatMap(Budget, (b) => b.reserve({ model: "m", inputTokens: 0.25, maxOutputTokens: 0 }))
          .pipe(Effect.provide(budgetAt(home)))
        const status = Effect.flatMap(Budget, (b) => b.status).pipe(Effect.provide(budgetAt(home)))
        const after = yield* status
        assert.closeTo(after.spentEur + after.reservedEur, 0.75, 1e-9, "held against the cap all along")
        // No call attempt outlives its timeout (60 s by default) by a minute: past that, the reservation is spent.
        yield* TestClock.adjust("121 seconds")
        const later = yield* status
        assert.closeTo(later.spentEur, 0.75, 1e-9)
        assert.strictEqual(later.reservedEur, 0)
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

  it.scoped("after a day that began at 01:00 (summer time in Santiago), counters reset at the next midnight", () =>
    withHome((home) =>
      Effect.gen(function*() {
        // 2026-09-06 in Santiago: at 00:00 (UTC-4) the clocks go to 01:00 (UTC-3); the next midnight is 03:00 UTC.
        yield* TestClock.setTime(Date.UTC(2026, 8, 6, 12))
        yield* Effect.gen(function*() {
          const budget = yield* Budget
          yield* spend(1.5)
          const today = yield* budget.status
          assert.strictEqual(today.day, "2026-09-06")
          assert.strictEqual(today.resetsAt, Date.UTC(2026, 8, 7, 3))
          yield* TestClock.setTime(Date.UTC(2026, 8, 7, 3))
          const next = yield* budget.status
          assert.strictEqual(next.day, "2026-09-07")
          assert.strictEqual(next.spentEur, 0)
        }).pipe(Effect.provide(budgetAt(home, AuditLogMemory, { timeZone: "America/Santiago" })))
      })
    ))

  it.scoped("a corrupt budget database is moved aside and rebuilt from the day's audit records, not zeroed", () =>
    withHome((home) =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.UTC(2026, 6, 1, 12, 0))
        const audit = yield* auditWithTraces
        const fs = yield* FileSystem.FileSystem
        yield* fs.makeDirectory(NodePath.join(home, ".state"), { recursive: true })
        yield* fs.writeFileString(NodePath.join(home, ".state", "budget.sqlite"), "not a database at all, ".repeat(200))
        yield* audit.append({
          kind: "llm_call",
          at: "2026-07-01T10:00:00.000Z",
          purpose: "digest_polish",
          provider: "p",
          model: "m",
          tier: "local-fast",
          input_tokens: 1,
          output_tokens: 1,
          cost_usd: 0.05
        })
        const status = yield* Effect.flatMap(Budget, (b) => b.status).pipe(
          Effect.provide(budgetAt(home, Layer.succeed(AuditLog, audit)))
        )
        assert.closeTo(status.spentEur, 0.8, 1e-9, "the traces' costs and the paid call outside a turn")
        const names = yield* fs.readDirectory(NodePath.join(home, ".state"))
        assert.isTrue(names.some((name) => name.startsWith("budget.sqlite.corrupt-")), names.join(", "))
        const again = yield* Effect.flatMap(Budget, (b) => b.status).pipe(Effect.provide(budgetAt(home)))
        assert.closeTo(again.spentEur, 0.8, 1e-9, "the rebuilt counters are stored")
      })
    ))

  it.scoped("rebuilt from the audit records, the override in force is the one set last, even when shorter", () =>
    withHome((home) =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.UTC(2026, 6, 1, 12, 0))
        const audit = yield* makeAuditLogMemory()
        for (
          const [at, until] of [["2026-07-01T09:00:00.000Z", "2026-07-01T20:00:00.000Z"], [
            "2026-07-01T10:00:00.000Z",
            "2026-07-01T16:00:00.000Z"
          ]] as const
        ) {
          yield* audit.append({ kind: "budget_override", at, sender: "cli:me", until, reason: "deadline" })
        }
        const fs = yield* FileSystem.FileSystem
        yield* fs.makeDirectory(NodePath.join(home, ".state"), { recursive: true })
        yield* fs.writeFileString(NodePath.join(home, ".state", "budget.sqlite"), "not a database at all, ".repeat(200))
        const status = yield* Effect.flatMap(Budget, (b) => b.status).pipe(
          Effect.provide(budgetAt(home, Layer.succeed(AuditLog, audit)))
        )
        assert.strictEqual(status.overrideUntil, Date.UTC(2026, 6, 1, 16, 0))
      })
    ))

  it.scoped("a store that cannot be created fails with a BudgetStoreError naming the file, not a defect", () =>
    withHome((home) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        yield* fs.writeFileString(NodePath.join(home, ".state"), "a file where the folder goes")
        const error = yield* Effect.flip(Effect.flatMap(Budget, (b) => b.status).pipe(Effect.provide(budgetAt(home))))
        assert.strictEqual(error._tag, "BudgetStoreError")
        if (error._tag === "BudgetStoreError") {
          assert.strictEqual(error.path, NodePath.join(home, ".state", "budget.sqlite"))
          assert.include(error.message, "cannot create its folder")
        }
      })
    ))

  it.scoped("budget.json of an earlier version is carried over once (its unsettled calls as spent), then renamed", () =>
    withHome((home) =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.UTC(2026, 6, 1, 12, 0))
        const fs = yield* FileSystem.FileSystem
        const json = NodePath.join(home, ".audit", "budget.json")
        yield* fs.makeDirectory(NodePath.dirname(json), { recursive: true })
        yield* fs.writeFileString(
          json,
          JSON.stringify({
            version: 1,
            day: "2026-07-01",
            time_zone: "Europe/Rome",
            spent_eur: 0.5,
            reservations: { r1: 0.2 },
            override_until: null,
            soft_notice_given: false,
            updated_at: "2026-07-01T11:00:00.000Z"
          })
        )
        const status = Effect.flatMap(Budget, (b) => b.status).pipe(Effect.provide(budgetAt(home)))
        assert.closeTo((yield* status).spentEur, 0.7, 1e-9)
        assert.isFalse(yield* fs.exists(json))
        assert.isTrue(yield* fs.exists(`${json}.imported`))
        assert.closeTo((yield* status).spentEur, 0.7, 1e-9, "imported once, not again")
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

  for (const fsync of ["always", "batch"] as const) {
    it.scoped(`two processes on one workspace: neither erases the other's spend (audit.fsync ${fsync})`, () =>
      withHome((home) =>
        Effect.gen(function*() {
          const at = (h: string) => budgetAt(h, AuditLogMemory, {}, { audit: { fsync } })
          const server = yield* Layer.build(at(home))
          const cli = yield* Layer.build(at(home))
          yield* spend(0.5).pipe(Effect.provide(server))
          yield* spend(0.3).pipe(Effect.provide(cli))
          // The server's next change decides on the CLI's commit, not on what the server itself left.
          yield* spend(0.1).pipe(Effect.provide(server))
          yield* spend(0.05).pipe(Effect.provide(server))
          for (const process of [server, cli]) {
            const status = yield* Effect.flatMap(Budget, (b) => b.status).pipe(Effect.provide(process))
            assert.closeTo(status.spentEur, 0.95, 1e-9)
          }
          const restarted = yield* Effect.flatMap(Budget, (b) => b.status).pipe(Effect.provide(at(home)))
          assert.closeTo(restarted.spentEur, 0.95, 1e-9)
        })
      ))
  }

  it.scoped("a status shows another process's spend within a second, and this process's own at once", () =>
    withHome((home) =>
      Effect.gen(function*() {
        const server = yield* Layer.build(budgetAt(home))
        const cli = yield* Layer.build(budgetAt(home))
        const statusOf = (process: typeof server) =>
          Effect.flatMap(Budget, (b) => b.status).pipe(Effect.provide(process))
        assert.strictEqual((yield* statusOf(server)).spentEur, 0)
        yield* spend(0.3).pipe(Effect.provide(cli))
        yield* TestClock.adjust("1 second")
        assert.closeTo((yield* statusOf(server)).spentEur, 0.3, 1e-9)
        yield* spend(0.2).pipe(Effect.provide(server))
        assert.closeTo((yield* statusOf(server)).spentEur, 0.5, 1e-9)
      })
    ))

  it.scoped("statusAt tells at once what status reads at the same time, or nothing when the store has no fresh copy", () =>
    withHome((home) =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.UTC(2026, 6, 1, 21, 0))
        const server = yield* Layer.build(budgetAt(home))
        const cli = yield* Layer.build(budgetAt(home))
        const budget = Context.get(server, Budget)
        let told = 0
        let untold = 0
        const compare = (when: string) =>
          Effect.gen(function*() {
            const at = budget.statusAt?.(yield* Clock.currentTimeMillis)
            const read = yield* budget.status
            if (at === undefined) untold++
            else {
              told++
              assert.deepStrictEqual(at, read, when)
            }
            assert.deepStrictEqual(budget.statusAt?.(yield* Clock.currentTimeMillis), read, `${when}, after a read`)
          })
        yield* compare("a new day")
        const inFlight = yield* budget.reserve({ model: "m", inputTokens: 0.5, maxOutputTokens: 0 })
        yield* compare("a call in flight")
        yield* budget.settle(inFlight, 0.7)
        yield* compare("settled")
        yield* spend(0.2).pipe(Effect.provide(cli))
        yield* compare("another process spent, within the second")
        yield* TestClock.adjust("1 second")
        yield* compare("another process spent, a second later")
        // A call that cost more than it reserved takes the day past the hard cap.
        yield* budget.settle(yield* budget.reserve({ model: "m", inputTokens: 0.1, maxOutputTokens: 0 }), 1.5)
        yield* compare("past the hard cap")
        assert.strictEqual((yield* budget.status).level, "hard")
        yield* TestClock.setTime(Date.UTC(2026, 6, 1, 22, 0))
        yield* compare("after midnight in Rome")
        assert.isAbove(told, 0)
        assert.isAbove(untold, 0, "a copy more than a second old is not used")
      })
    ))

  it.scoped("statuses read from the store's copy show the calls in flight; a free call is refused past the hard cap", () =>
    withHome((home) =>
      Effect.gen(function*() {
        const budget = yield* Budget
        const inFlight = yield* budget.reserve({ model: "m", inputTokens: 0.5, maxOutputTokens: 0 })
        // The first read after a change asks the database; the next ones, within a second, use the copy it kept.
        for (let i = 0; i < 3; i++) {
          const status = yield* budget.status
          assert.closeTo(status.reservedEur, 0.5, 1e-9, `read ${i + 1}`)
          assert.strictEqual(status.spentEur, 0)
        }
        yield* budget.settle(inFlight, 0.5)
        // A call that cost more than it reserved takes the day past the hard cap.
        const over = yield* budget.reserve({ model: "m", inputTokens: 1, maxOutputTokens: 0 })
        yield* budget.settle(over, 2)
        for (let i = 0; i < 3; i++) {
          const status = yield* budget.status
          assert.strictEqual(status.level, "hard", `read ${i + 1}`)
          assert.closeTo(status.spentEur, 2.5, 1e-9)
          assert.strictEqual(status.reservedEur, 0)
          // A model missing from the pricing table costs nothing, and is still refused past the hard cap.
          const refused = yield* Effect.flip(budget.reserve({ model: "unpriced", inputTokens: 1, maxOutputTokens: 0 }))
          assert.strictEqual(refused._tag, "BudgetExceeded")
        }
      }).pipe(Effect.provide(budgetAt(home)))
    ))

  it.scoped("the hard cap holds across processes: their reservations together never pass it", () =>
    withHome((home) =>
      Effect.gen(function*() {
        const processes = [yield* Layer.build(budgetAt(home)), yield* Layer.build(budgetAt(home))]
        let granted = 0
        for (let round = 0; round < 10; round++) {
          for (const process of processes) {
            const result = yield* Effect.flatMap(
              Budget,
              (b) => Effect.either(b.reserve({ model: "m", inputTokens: 0.3, maxOutputTokens: 0 }))
            ).pipe(Effect.provide(process))
            if (result._tag === "Right") granted++
          }
        }
        assert.strictEqual(granted, 6, "2 EUR hard cap / 0.3 EUR a call")
      })
    ))

  it.scoped("an abandoned reservation ends at its maximum, once", () =>
    withHome((home) =>
      Effect.gen(function*() {
        const budget = yield* Budget
        const reservation = yield* budget.reserve({ model: "m", inputTokens: 0.4, maxOutputTokens: 0 })
        yield* budget.abandon(reservation)
        const status = yield* budget.status
        assert.closeTo(status.spentEur, 0.4, 1e-9)
        assert.strictEqual(status.reservedEur, 0)
      }).pipe(Effect.provide(budgetAt(home)))
    ))

  it.scoped("a change keeps the rollback journal, emptied, instead of creating and deleting it each time", () =>
    withHome((home) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const journal = NodePath.join(home, ".state", "budget.sqlite-journal")
        yield* spend(0.1).pipe(Effect.provide(budgetAt(home)))
        yield* spend(0.2).pipe(Effect.provide(budgetAt(home)))
        assert.isTrue(yield* fs.exists(journal), "the journal is kept")
        // A zeroed header: not a hot journal, nothing for the next open to roll back.
        const header = (yield* fs.readFile(journal)).subarray(0, 8)
        assert.deepStrictEqual([...header], [0, 0, 0, 0, 0, 0, 0, 0])
        const status = yield* Effect.flatMap(Budget, (budget) => budget.status).pipe(Effect.provide(budgetAt(home)))
        assert.closeTo(status.spentEur, 0.3, 1e-9)
      }).pipe(Effect.provide(NodeContext.layer))
    ))
})

describe("BudgetLive across real processes", () => {
  it.scoped(
    "four processes spending at once: every cost counted, the hard cap never passed",
    () =>
      withHome((home) =>
        Effect.gen(function*() {
          const worker = NodePath.resolve("tests/support/budget-worker.mjs")
          const run = () =>
            Effect.async<{ granted: number; refused: number }>((resume) => {
              NodeChildProcess.execFile(
                "node",
                [worker, home, "60"],
                (error, stdout, stderr) =>
                  resume(error ? Effect.die(new Error(stderr || String(error))) : Effect.succeed(JSON.parse(stdout)))
              )
            })
          // The workers run on the real clock; the store is created first, so that they race on spending only.
          yield* TestClock.setTime(Date.now())
          const settings = { hardCapEur: 1, timeZone: "UTC" }
          yield* Effect.flatMap(Budget, (b) => b.status).pipe(Effect.provide(budgetAt(home, AuditLogMemory, settings)))
          const results = yield* Effect.all([run(), run(), run(), run()], { concurrency: "unbounded" })
          const granted = results.reduce((total, r) => total + r.granted, 0)
          assert.strictEqual(granted + results.reduce((total, r) => total + r.refused, 0), 240)
          yield* TestClock.setTime(Date.now())
          const status = yield* Effect.flatMap(Budget, (b) => b.status).pipe(
            Effect.provide(budgetAt(home, AuditLogMemory, settings))
          )
          assert.closeTo(status.spentEur, granted * 0.007, 1e-9, "a cost was lost between processes")
          assert.isAtMost(status.spentEur, 1)
          assert.isAtLeast(granted, 1 / 0.01, "at least the calls whose maximum fits were granted")
        }).pipe(Effect.provide(NodeContext.layer))
      ),
    60_000
  )
})
