import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Logger, LogLevel, Schema } from "effect"
import { AppConfig } from "../../../src/domain/AppConfig.js"
import { BudgetExceeded } from "../../../src/domain/Errors.js"
import { BudgetMemory } from "../../../src/layers/budget/BudgetMemory.js"
import { IdGeneratorLive } from "../../../src/layers/ids/IdGeneratorLive.js"
import { makeLlmTiers } from "../../../src/layers/llm/LlmTiers.js"
import { MyclawConfigFixed } from "../../../src/layers/MyclawConfigLive.js"
import { Budget } from "../../../src/services/Budget.js"
import { counting, fake, ok, request, settings } from "./support.js"

/** A budget that refuses every call to the models in `dear`, and counts the reservations asked for. */
const budgetRefusing = (dear: ReadonlyArray<string>) => {
  const asked: Array<string> = []
  const budget = Budget.of({
    status: Effect.dieMessage("not used"),
    statusWith: () => Effect.dieMessage("not used"),
    reserve: (call) =>
      Effect.suspend(() => {
        asked.push(call.model)
        return dear.includes(call.model)
          ? Effect.fail(
            new BudgetExceeded({ spentEur: 1.5, reservedEur: 0, callEur: 0.75, hardCapEur: 2, resetsAt: 0 })
          )
          : Effect.succeed({ id: `r-${asked.length}`, eur: 0 })
      }),
    settle: () => Effect.void,
    abandon: () => Effect.void,
    softNoticeGiven: Effect.void,
    override: () => Effect.dieMessage("not used")
  })
  return { budget, asked }
}

/** A day's budget of 5 EUR in memory, where a call to the model `hang` can cost at most 1 EUR. */
const hangConfig = Schema.decodeUnknownSync(AppConfig)({
  budget: { softCapEur: 4, hardCapEur: 5, timeZone: "UTC" },
  usdToEur: 1,
  pricing: { hang: { inputPerMTok: 1_000_000, cachedInputPerMTok: 0, outputPerMTok: 0 } }
})
const hangBudget = Effect.provide(
  Budget,
  BudgetMemory.pipe(Layer.provide(Layer.merge(MyclawConfigFixed(hangConfig), IdGeneratorLive)))
)

describe("LlmTiers with a budget", () => {
  it.effect("a refusal surfaces as BudgetExceeded, not LlmError: no call, no retry, nothing cools down", () =>
    Effect.gen(function*() {
      const a = fake("a", [ok("never")])
      const { asked, budget } = budgetRefusing(["a"])
      const llm = makeLlmTiers({ frontier: [a.provider], "local-fast": [] }, settings, budget)
      const error = yield* Effect.flip(llm.generate(request))
      assert.strictEqual(error._tag, "BudgetExceeded")
      assert.strictEqual(a.calls.length, 0)
      assert.deepStrictEqual(asked, ["a"], "asked once: a refusal is not retried")
      const [health] = yield* llm.health
      assert.isNull(health!.lastError)
      assert.isNull(health!.cooldownUntil)
    }))

  it.effect("the next provider is tried when its worst case fits, and the refusal is a failed attempt", () =>
    Effect.gen(function*() {
      const a = fake("a", [ok("never")])
      const b = fake("b", [ok("from b")])
      const { asked, budget } = budgetRefusing(["a"])
      const llm = makeLlmTiers({ frontier: [a.provider, b.provider], "local-fast": [] }, settings, budget)
      const response = yield* llm.generate(request).pipe(Logger.withMinimumLogLevel(LogLevel.None))
      assert.strictEqual(response.provider, "b")
      assert.deepStrictEqual(asked, ["a", "b"])
      assert.deepStrictEqual(response.failedAttempts, [{
        provider: "a",
        reason: "BudgetExceeded",
        message: "this call could cost up to 0.7500 EUR, more than the 0.5000 EUR left of the 2.00 EUR hard cap " +
          "(1.5000 EUR spent today)"
      }])
    }))

  it.effect("every provider refused: the first refusal; one called and failed: its error, refusals listed", () =>
    Effect.gen(function*() {
      const both = budgetRefusing(["a", "b"])
      const refusing = makeLlmTiers(
        { frontier: [fake("a", []).provider, fake("b", []).provider], "local-fast": [] },
        settings,
        both.budget
      )
      assert.strictEqual((yield* Effect.flip(refusing.generate(request)))._tag, "BudgetExceeded")
      assert.deepStrictEqual(both.asked, ["a", "b"])

      const failing = makeLlmTiers(
        { frontier: [fake("a", []).provider, fake("b", ["Auth"]).provider], "local-fast": [] },
        settings,
        budgetRefusing(["a"]).budget
      )
      const error = yield* Effect.flip(failing.generate(request))
      if (error._tag !== "LlmError") return assert.fail(`expected an LlmError, got ${error._tag}`)
      assert.strictEqual(error.reason, "Auth")
      assert.deepStrictEqual(error.attempts?.map((attempt) => `${attempt.provider}:${attempt.reason}`), [
        "a:BudgetExceeded",
        "b:Auth"
      ])
    }))

  it.effect("a call interrupted in flight ends its reservation: counted at its maximum, nothing left reserved", () =>
    Effect.gen(function*() {
      const budget = yield* hangBudget
      const llm = makeLlmTiers(
        { frontier: [counting("hang", () => Effect.never).provider], "local-fast": [] },
        { ...settings, pricing: hangConfig.pricing },
        budget
      )
      const fiber = yield* Effect.fork(llm.generate(request))
      while ((yield* budget.status).reservedEur === 0) yield* Effect.yieldNow()
      yield* Fiber.interrupt(fiber)
      const status = yield* budget.status
      assert.strictEqual(status.reservedEur, 0, "the interrupted call still holds its reservation")
      assert.closeTo(status.spentEur, 1, 1e-9)
    }))

  it.effect("a call interrupted before it was sent ends its reservation at 0: nothing spent, nothing reserved", () =>
    Effect.gen(function*() {
      const memory = yield* hangBudget
      // The reservation is made, then waits: the interruption comes while the call is not sent yet.
      const reserved = yield* Deferred.make<void>()
      const go = yield* Deferred.make<void>()
      const budget = Budget.of({
        ...memory,
        reserve: (call) =>
          Effect.tap(
            memory.reserve(call),
            () => Effect.zipRight(Deferred.succeed(reserved, undefined), Deferred.await(go))
          )
      })
      const hanging = counting("hang", () => Effect.never)
      const llm = makeLlmTiers(
        { frontier: [hanging.provider], "local-fast": [] },
        { ...settings, pricing: hangConfig.pricing },
        budget
      )
      const fiber = yield* Effect.fork(llm.generate(request))
      yield* Deferred.await(reserved)
      const interrupted = yield* Effect.fork(Fiber.interrupt(fiber))
      yield* Deferred.succeed(go, undefined)
      yield* Fiber.join(interrupted)
      const status = yield* budget.status
      assert.strictEqual(hanging.calls.count, 0, "the call was sent")
      assert.strictEqual(status.reservedEur, 0, "the call still holds its reservation")
      assert.strictEqual(status.spentEur, 0)
    }))

  it.effect("a model missing from the pricing table is settled at 0 USD and warned about once, with or without a budget", () =>
    Effect.gen(function*() {
      const settled: Array<number> = []
      const { budget } = budgetRefusing([])
      const counting = Budget.of({ ...budget, settle: (_, usd) => Effect.sync(() => void settled.push(usd)) })
      const logged: Array<string> = []
      const logger = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ message }) => void logged.push(String(Array.isArray(message) ? message[0] : message)))
      )
      const warning = "model m is not in the pricing table: its calls are counted at 0 USD"
      const withBudget = makeLlmTiers(
        { frontier: [fake("a", [ok("1"), ok("2")]).provider], "local-fast": [] },
        settings,
        counting
      )
      const first = yield* withBudget.generate(request).pipe(Effect.provide(logger))
      yield* withBudget.generate(request).pipe(Effect.provide(logger))
      assert.strictEqual(first.costUsd, 0)
      assert.deepStrictEqual(settled, [0, 0])
      assert.deepStrictEqual(logged, [warning])
      const without = makeLlmTiers({ frontier: [fake("b", [ok("3"), ok("4")]).provider], "local-fast": [] }, settings)
      yield* without.generate(request).pipe(Effect.provide(logger))
      yield* without.generate(request).pipe(Effect.provide(logger))
      assert.deepStrictEqual(logged, [warning, warning])
    }))
})
