import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Schema, TestClock } from "effect"
import { UsageError } from "../../src/cli/Args.js"
import { budgetOverride } from "../../src/cli/BudgetCommand.js"
import { AppConfig } from "../../src/domain/AppConfig.js"
import { BudgetMemory } from "../../src/layers/budget/BudgetMemory.js"
import { IdGeneratorLive } from "../../src/layers/ids/IdGeneratorLive.js"
import { MyclawConfigFixed } from "../../src/layers/MyclawConfigLive.js"
import { Budget } from "../../src/services/Budget.js"

/** A budget in memory, counted in `timeZone`. */
const budgetIn = (timeZone: string) =>
  BudgetMemory.pipe(Layer.provide(Layer.mergeAll(
    MyclawConfigFixed(Schema.decodeUnknownSync(AppConfig)({ budget: { softCapEur: 1, hardCapEur: 2, timeZone } })),
    IdGeneratorLive
  )))

/** `myclaw budget override --until <until>` at `now` in `timeZone`: the instant the hard cap is lifted until. */
const overrideAt = (now: number, until: string, timeZone: string) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(now)
    yield* budgetOverride({ until, reason: "deadline" })
    return (yield* (yield* Budget).status).overrideUntil
  }).pipe(Effect.provide(budgetIn(timeZone)), Logger.withMinimumLogLevel(LogLevel.None))

describe("myclaw budget override", () => {
  it.effect("lifts the hard cap until that wall-clock time today, in the budget's zone", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* overrideAt(Date.UTC(2026, 6, 1, 10), "23:59", "Europe/Rome"),
        Date.UTC(2026, 6, 1, 21, 59)
      )
      assert.strictEqual(yield* overrideAt(Date.UTC(2026, 6, 1, 10), "23:59", "UTC"), Date.UTC(2026, 6, 1, 23, 59))
    }))

  it.effect("on the days the clocks move, the time is still the one on the clock", () =>
    Effect.gen(function*() {
      // Rome's 23-hour and 25-hour days.
      assert.strictEqual(
        yield* overrideAt(Date.UTC(2026, 2, 29, 8), "23:59", "Europe/Rome"),
        Date.UTC(2026, 2, 29, 21, 59)
      )
      assert.strictEqual(
        yield* overrideAt(Date.UTC(2026, 9, 25, 8), "23:59", "Europe/Rome"),
        Date.UTC(2026, 9, 25, 22, 59)
      )
      // Santiago, 2026-09-06: the day begins at 01:00 (UTC-3); 12:00 is 15:00 UTC, not an hour later.
      assert.strictEqual(
        yield* overrideAt(Date.UTC(2026, 8, 6, 12), "12:00", "America/Santiago"),
        Date.UTC(2026, 8, 6, 15)
      )
    }))

  it.effect("a time already passed today is refused, naming it and the zone, and nothing is lifted", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 6, 1, 10))
      const error = yield* Effect.flip(budgetOverride({ until: "11:00", reason: "deadline" }))
      assert.instanceOf(error, UsageError)
      assert.strictEqual(error.message, "--until 11:00 has already passed today (Europe/Rome)")
      assert.isNull((yield* (yield* Budget).status).overrideUntil)
    }).pipe(Effect.provide(budgetIn("Europe/Rome")), Logger.withMinimumLogLevel(LogLevel.None)))
})
