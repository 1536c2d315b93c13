import { assert, describe, it } from "@effect/vitest"
import { Cause, Chunk, Effect, Exit, Fiber, Logger, LogLevel, Option, TestClock } from "effect"
import { LlmError, type LlmFailure } from "../../../src/domain/Errors.js"
import type { LlmRequest } from "../../../src/domain/LlmTypes.js"
import { makeLlmTiers, type TierSettings } from "../../../src/layers/llm/LlmTiers.js"
import type { Provider, ProviderResponse } from "../../../src/layers/llm/Provider.js"
import { counting } from "./support.js"

type Answer = ProviderResponse | LlmFailure | { readonly reason: LlmFailure; readonly retryAfterMs: number } | "hang"

/** A provider answering from a list, recording when (on the Effect clock) each call came. */
const fake = (name: string, answers: ReadonlyArray<Answer>, model = name) => {
  const calls: Array<number> = []
  const provider: Provider = {
    name,
    model,
    generate: () =>
      Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeMillis), (now) => {
        const answer = answers[calls.length] ?? "BadResponse"
        calls.push(now)
        if (answer === "hang") return Effect.never
        if (typeof answer === "string") {
          return Effect.fail(new LlmError({ reason: answer, provider: name, message: answer }))
        }
        if ("reason" in answer) {
          return Effect.fail(
            new LlmError({
              reason: answer.reason,
              provider: name,
              message: "slow down",
              retryAfterMs: answer.retryAfterMs
            })
          )
        }
        return Effect.succeed(answer)
      })
  }
  return { provider, calls }
}

const ok = (text: string, model = "m", usage = { input: 1000, output: 100, cached: 0 }): ProviderResponse => ({
  model,
  text,
  toolCalls: [],
  usage,
  finishReason: "stop"
})

const settings: TierSettings = {
  pricing: {},
  timeoutMs: 60_000,
  retries: { max: 2, baseDelayMs: 500 },
  configFile: "myclaw.json"
}
const request: LlmRequest = { tier: "frontier", system: [], messages: [{ role: "user", content: "hi" }], tools: [] }

/** Runs the call in a fiber and moves the test clock 100 ms at a time until it is done. */
const settle = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(effect)
    for (let i = 0; i < 10_000 && Option.isNone(yield* Fiber.poll(fiber)); i++) yield* TestClock.adjust("100 millis")
    return yield* Fiber.join(fiber)
  }).pipe(Logger.withMinimumLogLevel(LogLevel.None))

describe("LlmTiers", () => {
  it.effect("retries a transient failure with backoff and records the failed attempts", () =>
    Effect.gen(function*() {
      const a = fake("a", ["Server", "Transport", ok("hello")])
      const llm = makeLlmTiers({ frontier: [a.provider], "local-fast": [] }, settings)
      const response = yield* settle(llm.generate(request))
      assert.strictEqual(response.text, "hello")
      assert.strictEqual(response.provider, "a")
      assert.deepStrictEqual(response.failedAttempts.map((f) => f.reason), ["Server", "Transport"])
      assert.isAtLeast(a.calls[1]! - a.calls[0]!, 400)
      assert.isAbove(a.calls[2]! - a.calls[1]!, a.calls[1]! - a.calls[0]!)
    }))

  it.effect("waits at least what retry-after asks before trying again", () =>
    Effect.gen(function*() {
      const a = fake("a", [{ reason: "RateLimited", retryAfterMs: 7000 }, ok("later")])
      const llm = makeLlmTiers({ frontier: [a.provider], "local-fast": [] }, settings)
      const fiber = yield* Effect.fork(llm.generate(request))
      yield* TestClock.adjust("6999 millis")
      assert.strictEqual(a.calls.length, 1)
      yield* TestClock.adjust("1 millis")
      assert.strictEqual((yield* Fiber.join(fiber)).text, "later")
      assert.deepStrictEqual(a.calls, [0, 7000])
    }))

  it.effect("a non-transient failure ends the call at once, without retry or failover", () =>
    Effect.gen(function*() {
      const a = fake("a", ["BadRequest", ok("never")])
      const b = fake("b", [ok("never")])
      const llm = makeLlmTiers({ frontier: [a.provider, b.provider], "local-fast": [] }, settings)
      const error = yield* Effect.flip(settle(llm.generate(request)))
      assert.strictEqual(error.reason, "BadRequest")
      assert.strictEqual(a.calls.length, 1)
      assert.strictEqual(b.calls.length, 0)
    }))

  it.effect("fails over to the next provider once retries run out, and cools the failed one down", () =>
    Effect.gen(function*() {
      const a = fake("a", ["Server", "Server", "Server", "Server", "Server", "Server", ok("a is back")])
      const b = fake("b", [ok("from b"), ok("b again"), ok("b third")])
      const llm = makeLlmTiers({ frontier: [a.provider, b.provider], "local-fast": [] }, settings)
      const first = yield* settle(llm.generate(request))
      assert.strictEqual(first.provider, "b")
      assert.deepStrictEqual(first.failedAttempts.map((f) => `${f.provider}:${f.reason}`), [
        "a:Server",
        "a:Server",
        "a:Server"
      ])
      const cooling = yield* llm.health
      assert.isNotNull(cooling.find((h) => h.provider === "a")!.cooldownUntil)
      const second = yield* settle(llm.generate(request))
      assert.strictEqual(second.provider, "b", "a is cooling down: b is tried first")
      assert.strictEqual(a.calls.length, 3)
      yield* TestClock.adjust("30 seconds")
      const third = yield* settle(llm.generate(request))
      assert.strictEqual(third.provider, "b", "a was tried first again after 30 s, failed, and b answered")
      assert.strictEqual(a.calls.length, 6)
    }))

  it.effect("each attempt has a timeout", () =>
    Effect.gen(function*() {
      const a = fake("a", ["hang", ok("second try")])
      const llm = makeLlmTiers({ frontier: [a.provider], "local-fast": [] }, { ...settings, timeoutMs: 1000 })
      const response = yield* settle(llm.generate(request))
      assert.strictEqual(response.text, "second try")
      assert.deepStrictEqual(response.failedAttempts, [{
        provider: "a",
        reason: "Timeout",
        message: "no answer within 1000 ms"
      }])
    }))

  it.effect("an empty tier borrows the other's providers; no provider at all names the configuration", () =>
    Effect.gen(function*() {
      const f = fake("f", [ok("from frontier")])
      const llm = makeLlmTiers({ frontier: [f.provider], "local-fast": [] }, settings)
      const response = yield* llm.generate({ ...request, tier: "local-fast" })
      assert.strictEqual(response.tier, "frontier")
      const none = makeLlmTiers({ frontier: [], "local-fast": [] }, settings)
      const error = yield* Effect.flip(none.generate(request))
      assert.strictEqual(error.reason, "NotConfigured")
      assert.include(error.message, "myclaw.json")
    }))

  it.effect("cost comes from the pricing table, cached input at the cached price; unknown models cost 0", () =>
    Effect.gen(function*() {
      const a = fake("a", [ok("x", "gpt-x", { input: 10_000, output: 2_000, cached: 4_000 }), ok("y", "mystery")])
      const llm = makeLlmTiers({ frontier: [a.provider], "local-fast": [] }, {
        ...settings,
        pricing: { "gpt-x": { inputPerMTok: 2.5, cachedInputPerMTok: 1.25, outputPerMTok: 10 } }
      })
      const priced = yield* llm.generate(request)
      assert.closeTo(priced.costUsd, (6_000 * 2.5 + 4_000 * 1.25 + 2_000 * 10) / 1e6, 1e-12)
      const unknown = yield* llm.generate(request).pipe(Logger.withMinimumLogLevel(LogLevel.None))
      assert.strictEqual(unknown.costUsd, 0)
    }))

  it.effect("health keeps, per provider, the last success and the last error", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust("5 seconds")
      const a = fake("a", [ok("fine"), "Auth"])
      const llm = makeLlmTiers({ frontier: [a.provider], "local-fast": [] }, settings)
      yield* llm.generate(request)
      yield* Effect.flip(llm.generate(request))
      const [health] = yield* llm.health
      assert.strictEqual(health!.lastSuccessAt, 5000)
      assert.deepStrictEqual(health!.lastError, { reason: "Auth", message: "Auth", at: 5000 })
      assert.isNull(health!.cooldownUntil, "an auth error is not a reason to cool down")
    }))

  it.effect("a provider's defect is no failure: passed on as it is, without retry, failover or cool-down", () =>
    Effect.gen(function*() {
      const broken = counting("broken", () => Effect.die(new Error("adapter bug")))
      const b = fake("b", [ok("never")])
      const llm = makeLlmTiers({ frontier: [broken.provider, b.provider], "local-fast": [] }, settings)
      const exit = yield* Effect.exit(settle(llm.generate(request)))
      assert.isTrue(Exit.isFailure(exit) && Option.isNone(Cause.failureOption(exit.cause)))
      const defect = Exit.isFailure(exit) ? Chunk.toReadonlyArray(Cause.defects(exit.cause)) : []
      assert.deepStrictEqual(defect.map((d) => d instanceof Error ? d.message : d), ["adapter bug"])
      assert.strictEqual(broken.calls.count, 1)
      assert.strictEqual(b.calls.length, 0)
      const [health] = yield* llm.health
      assert.isNull(health!.lastError)
      assert.isNull(health!.cooldownUntil)
    }))
})
