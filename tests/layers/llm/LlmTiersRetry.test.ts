import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Logger, LogLevel, TestClock } from "effect"
import { makeLlmTiers } from "../../../src/layers/llm/LlmTiers.js"
import { fake, ok, request, settings, settle } from "./support.js"

const gaps = (calls: ReadonlyArray<number>) => calls.slice(1).map((at, i) => at - calls[i]!)

describe("LlmTiers retry schedule", () => {
  it.effect("backoff doubles from baseDelayMs with 0.8-1.2 jitter, and never waits longer than 60 s", () =>
    Effect.gen(function*() {
      const a = fake("a", ["Server", "Timeout", "Transport", ok("at last")])
      const llm = makeLlmTiers({ frontier: [a.provider], "local-fast": [] }, {
        ...settings,
        retries: { max: 5, baseDelayMs: 40_000 }
      })
      const fiber = yield* Effect.fork(llm.generate(request))
      yield* TestClock.adjust("200 seconds")
      assert.strictEqual((yield* Fiber.join(fiber)).text, "at last")
      const [first, second, third] = gaps(a.calls)
      assert.isAtLeast(first!, 32_000)
      assert.isAtMost(first!, 48_100)
      assert.closeTo(second!, 60_000, 1e-6, "80 s of backoff is capped at 60 s")
      assert.closeTo(third!, 60_000, 1e-6, "and so are 160 s")
    }).pipe(Logger.withMinimumLogLevel(LogLevel.None)))

  it.effect("a retry-after longer than 60 s moves on to the next provider at once", () =>
    Effect.gen(function*() {
      const a = fake("a", [{ reason: "RateLimited", retryAfterMs: 120_000 }, ok("never")])
      const b = fake("b", [ok("from b")])
      const llm = makeLlmTiers({ frontier: [a.provider, b.provider], "local-fast": [] }, settings)
      const response = yield* settle(llm.generate(request))
      assert.strictEqual(response.provider, "b")
      assert.deepStrictEqual(a.calls, [0])
      assert.deepStrictEqual(b.calls, [0])
      assert.deepStrictEqual(response.failedAttempts.map((f) => `${f.provider}:${f.reason}`), ["a:RateLimited"])
    }))

  it.effect("retries stop after retries.max, each failed attempt recorded", () =>
    Effect.gen(function*() {
      const a = fake("a", ["Server", "Server", "Server", "Server", ok("never")])
      const llm = makeLlmTiers({ frontier: [a.provider], "local-fast": [] }, {
        ...settings,
        retries: { max: 3, baseDelayMs: 10 }
      })
      const error = yield* Effect.flip(settle(llm.generate(request)))
      assert.strictEqual(a.calls.length, 4)
      assert.strictEqual(error.reason, "Server")
      assert.strictEqual(error.attempts?.length, 4)
      assert.include(error.message, "(after 4 attempts)")
    }))
})

describe("LlmTiers failed attempts", () => {
  it.effect("an answer at the first try has none, and the failures of later calls are not added to it", () =>
    Effect.gen(function*() {
      const a = fake("a", [ok("at once"), "Server", "Timeout", ok("third try"), ok("at once again")])
      const llm = makeLlmTiers({ frontier: [a.provider], "local-fast": [] }, {
        ...settings,
        retries: { max: 3, baseDelayMs: 10 }
      })
      const first = yield* settle(llm.generate(request))
      const retried = yield* settle(llm.generate(request))
      const last = yield* settle(llm.generate(request))
      assert.deepStrictEqual(first.failedAttempts, [])
      assert.deepStrictEqual(retried.failedAttempts.map((f) => `${f.provider}:${f.reason}`), ["a:Server", "a:Timeout"])
      assert.deepStrictEqual(last.failedAttempts, [])
      assert.deepStrictEqual(first.failedAttempts, [], "still none once other calls have failed")
      assert.strictEqual(retried.text, "third try")
    }))
})
