import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Schema, TestClock } from "effect"
import { AppConfig } from "../../src/domain/AppConfig.js"
import { Budget } from "../../src/services/Budget.js"

/**
 * The Budget contract: every implementation keeps the same counters and refuses the same calls. `make` builds
 * the implementation under test from a configuration (a fresh, empty budget each time).
 * Prices here: model `m` costs 1 EUR per input token, `free` has no price.
 */
export const budgetContract = (name: string, make: (config: AppConfig) => Layer.Layer<Budget, unknown>) =>
  describe(`Budget contract: ${name}`, () => {
    const config = (budget: Partial<typeof AppConfig.Encoded["budget"]> = {}) =>
      Schema.decodeUnknownSync(AppConfig)({
        budget: { softCapEur: 1, hardCapEur: 2, timeZone: "Europe/Rome", ...budget },
        usdToEur: 1,
        timeouts: { llmMs: 10_000, toolMs: 1_000 },
        pricing: { m: { inputPerMTok: 1_000_000, cachedInputPerMTok: 0, outputPerMTok: 0 } }
      })

    const run = <A, E>(effect: Effect.Effect<A, E, Budget>, budget: Partial<typeof AppConfig.Encoded["budget"]> = {}) =>
      effect.pipe(Effect.provide(make(config(budget))), Logger.withMinimumLogLevel(LogLevel.None))

    const call = (eur: number) => ({ model: "m", inputTokens: eur, maxOutputTokens: 0 })
    const spend = (eur: number, costEur = eur) =>
      Effect.flatMap(Budget, (b) => Effect.flatMap(b.reserve(call(eur)), (r) => b.settle(r, costEur)))

    it.scoped("starts at zero; levels follow the caps; the soft notice is pending once", () =>
      run(Effect.gen(function*() {
        const budget = yield* Budget
        const fresh = yield* budget.status
        assert.deepInclude(fresh, { level: "ok", spentEur: 0, reservedEur: 0, softCapEur: 1, hardCapEur: 2 })
        yield* spend(1)
        const soft = yield* budget.status
        assert.deepInclude(soft, { level: "soft", softNoticePending: true })
        yield* budget.softNoticeGiven
        assert.isFalse((yield* budget.status).softNoticePending)
        yield* spend(1)
        assert.strictEqual((yield* budget.status).level, "hard")
      })))

    it.scoped("a reservation is held against the cap until settled; the real cost replaces it", () =>
      run(Effect.gen(function*() {
        const budget = yield* Budget
        const reservation = yield* budget.reserve(call(0.6))
        assert.closeTo(reservation.eur, 0.6, 1e-9)
        assert.closeTo((yield* budget.status).reservedEur, 0.6, 1e-9)
        yield* budget.settle(reservation, 0.25)
        const status = yield* budget.status
        assert.strictEqual(status.reservedEur, 0)
        assert.closeTo(status.spentEur, 0.25, 1e-9)
      })))

    it.scoped("a call whose maximum would pass the hard cap is refused, with what it could cost and what is left", () =>
      run(Effect.gen(function*() {
        const budget = yield* Budget
        yield* spend(0.5)
        const held = yield* budget.reserve(call(0.5))
        const refused = yield* Effect.flip(budget.reserve(call(1.5)))
        assert.strictEqual(refused._tag, "BudgetExceeded")
        assert.closeTo(refused.spentEur, 0.5, 1e-9)
        assert.closeTo(refused.reservedEur, 0.5, 1e-9)
        assert.closeTo(refused.callEur, 1.5, 1e-9)
        assert.strictEqual(refused.hardCapEur, 2)
        assert.strictEqual(refused.model, "m")
        yield* budget.settle(held, 0.5)
        assert.closeTo((yield* budget.status).spentEur, 1, 1e-9, "a refused call costs nothing")
      })))

    it.scoped("sessions reserving at once never pass the hard cap together", () =>
      run(Effect.gen(function*() {
        const budget = yield* Budget
        const results = yield* Effect.forEach(
          Array.from({ length: 40 }, () => call(0.3)),
          (c) => Effect.either(budget.reserve(c)),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter((r) => r._tag === "Right").length, 6)
        assert.closeTo((yield* budget.status).reservedEur, 1.8, 1e-9)
      })))

    it.scoped("an unpriced model reserves nothing and settles at its real cost", () =>
      run(Effect.gen(function*() {
        const budget = yield* Budget
        const reservation = yield* budget.reserve({ model: "free", inputTokens: 1e6, maxOutputTokens: 1e6 })
        assert.strictEqual(reservation.eur, 0)
        yield* budget.settle(reservation, 0)
        assert.deepInclude(yield* budget.status, { spentEur: 0, reservedEur: 0 })
      })))

    it.scoped("an abandoned call is spent at its maximum", () =>
      run(Effect.gen(function*() {
        const budget = yield* Budget
        yield* budget.abandon(yield* budget.reserve(call(0.7)))
        assert.deepInclude(yield* budget.status, { spentEur: 0.7, reservedEur: 0 })
      })))

    it.scoped("a reservation older than the LLM timeout plus a minute is counted as spent; its late settlement adds only the excess", () =>
      run(Effect.gen(function*() {
        const budget = yield* Budget
        const late = yield* budget.reserve(call(0.4))
        yield* TestClock.adjust("70 seconds")
        assert.closeTo((yield* budget.status).reservedEur, 0.4, 1e-9, "10 s timeout + 60 s: not stale yet")
        yield* TestClock.adjust("1 second")
        const swept = yield* budget.status
        assert.closeTo(swept.spentEur, 0.4, 1e-9)
        assert.strictEqual(swept.reservedEur, 0)
        yield* budget.settle(late, 0.5)
        assert.closeTo((yield* budget.status).spentEur, 0.5, 1e-9)
      })))

    it.scoped("counters reset at midnight in the configured zone; calls in flight stay held", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.UTC(2026, 6, 1, 21, 59, 30))
        yield* run(Effect.gen(function*() {
          const budget = yield* Budget
          yield* spend(1.5)
          const held = yield* budget.reserve(call(0.25))
          assert.strictEqual((yield* budget.status).day, "2026-07-01")
          yield* TestClock.setTime(Date.UTC(2026, 6, 1, 22, 0))
          const next = yield* budget.status
          assert.deepInclude(next, { day: "2026-07-02", spentEur: 0, level: "ok", resetsAt: Date.UTC(2026, 6, 2, 22) })
          assert.closeTo(next.reservedEur, 0.25, 1e-9)
          yield* budget.settle(held, 0.1)
          assert.closeTo((yield* budget.status).spentEur, 0.1, 1e-9, "settled into the day it ended on")
        }))
      }))

    it.scoped("an override lifts the hard cap until the given time today", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.UTC(2026, 6, 1, 10, 0))
        yield* run(Effect.gen(function*() {
          const budget = yield* Budget
          yield* spend(2)
          assert.strictEqual((yield* budget.status).level, "hard")
          yield* budget.override({ until: Date.UTC(2026, 6, 1, 12, 0), reason: "deadline", sender: "cli:me" })
          const lifted = yield* budget.status
          assert.deepInclude(lifted, { level: "soft", overrideUntil: Date.UTC(2026, 6, 1, 12, 0) })
          yield* spend(1)
          yield* TestClock.setTime(Date.UTC(2026, 6, 1, 12, 0))
          assert.deepInclude(yield* budget.status, { level: "hard", overrideUntil: null })
          assert.strictEqual((yield* Effect.flip(budget.reserve(call(0.01))))._tag, "BudgetExceeded")
        }))
      }))
  })
