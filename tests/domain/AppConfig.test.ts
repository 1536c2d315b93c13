import { assert, describe, it } from "@effect/vitest"
import { Effect, ParseResult } from "effect"
import { AppConfig, decodeAppConfig } from "../../src/domain/AppConfig.js"

const problem = (json: unknown) =>
  decodeAppConfig(json).pipe(
    Effect.flip,
    Effect.map((error) => ParseResult.TreeFormatter.formatErrorSync(error))
  )

describe("AppConfig", () => {
  it.effect("decodes {} to the documented defaults", () =>
    Effect.gen(function*() {
      const config = yield* decodeAppConfig({})
      assert.instanceOf(config, AppConfig)
      assert.strictEqual(config.maxSteps, 10)
      assert.deepStrictEqual(config.timeouts, { llmMs: 60_000, toolMs: 30_000 })
      assert.deepStrictEqual(config.retries, { max: 3, baseDelayMs: 500 })
      assert.deepStrictEqual(config.tiers, { frontier: [], "local-fast": [] })
      assert.deepStrictEqual(config.policy, { rules: [], trusted: [] })
      assert.deepStrictEqual(config.approvals, { timeoutMs: 300_000 })
      assert.deepStrictEqual(config.budget, {
        softCapEur: 2,
        hardCapEur: 5,
        timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone
      })
      assert.deepStrictEqual(config.audit, { fsync: "always" })
      assert.deepStrictEqual(config.backup, { dailyAt: "03:30" })
      assert.deepStrictEqual(config.digest, { dailyAt: "22:00" })
      assert.deepStrictEqual(config.pricing, {})
      assert.strictEqual(config.usdToEur, 0.92)
      assert.deepStrictEqual(config.traces, { fsync: "batch", recordRequests: false })
    }))

  it.effect("AppConfig.make({}) equals the decoded {}", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual({ ...AppConfig.make({}) }, { ...(yield* decodeAppConfig({})) })
    }))

  it.effect("fills defaults inside a partly given section", () =>
    Effect.gen(function*() {
      const config = yield* decodeAppConfig({
        timeouts: { toolMs: 5 },
        tiers: { frontier: [{ provider: "scripted", script: "s.json" }] }
      })
      assert.deepStrictEqual(config.timeouts, { llmMs: 60_000, toolMs: 5 })
      assert.deepStrictEqual(config.tiers.frontier, [{
        provider: "scripted",
        script: "s.json",
        model: "scripted",
        loop: false
      }])
      assert.deepStrictEqual(config.tiers["local-fast"], [])
    }))

  it.effect("names a field of the wrong type", () =>
    Effect.gen(function*() {
      const message = yield* problem({ maxSteps: "ten" })
      assert.include(message, "[\"maxSteps\"]")
      assert.include(message, "\"ten\"")
    }))

  it.effect("names an unknown provider, down to its index", () =>
    Effect.gen(function*() {
      const message = yield* problem({ tiers: { frontier: [{ provider: "nope" }] } })
      assert.include(message, "[\"tiers\"]")
      assert.include(message, "[\"frontier\"]")
      assert.include(message, "[0]")
      assert.include(message, "[\"provider\"]")
      assert.include(message, "\"nope\"")
    }))

  it.effect("rejects an unknown top-level key, and a misspelt nested one", () =>
    Effect.gen(function*() {
      const top = yield* problem({ maxStep: 3 })
      assert.include(top, "[\"maxStep\"]")
      assert.include(top, "is unexpected")
      const nested = yield* problem({ timeouts: { toolMS: 3 } })
      assert.include(nested, "[\"toolMS\"]")
    }))

  it.effect("rejects out-of-range values", () =>
    Effect.gen(function*() {
      assert.include(yield* problem({ maxSteps: 0 }), "[\"maxSteps\"]")
      assert.include(yield* problem({ retries: { max: 4 } }), "[\"max\"]")
      assert.include(yield* problem({ traces: { fsync: "never" } }), "[\"fsync\"]")
      assert.include(yield* problem({ policy: { rules: [{ match: "", decision: "allow" }] } }), "[\"match\"]")
    }))

  it.effect("reports every problem at once", () =>
    Effect.gen(function*() {
      const message = yield* problem({ maxSteps: "ten", usdToEur: -1, bogus: true })
      assert.include(message, "[\"maxSteps\"]")
      assert.include(message, "[\"usdToEur\"]")
      assert.include(message, "[\"bogus\"]")
    }))
})
