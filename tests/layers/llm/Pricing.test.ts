import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger } from "effect"
import { makePricing } from "../../../src/layers/llm/Pricing.js"

const table = {
  "gpt-4o": { inputPerMTok: 2.5, cachedInputPerMTok: 1.25, outputPerMTok: 10 }
}
const usage = { input: 1_000, output: 100, cached: 200 }

describe("makePricing", () => {
  it("prices a call by the model's entry or its closest prefix; a missing model costs 0", () => {
    const pricing = makePricing(table)
    const expected = (800 * 2.5 + 200 * 1.25 + 100 * 10) / 1e6
    assert.closeTo(pricing.usd("gpt-4o", usage), expected, 1e-12)
    assert.closeTo(pricing.usd("gpt-4o-2024-08-06", usage), expected, 1e-12)
    assert.strictEqual(pricing.usd("local-llama", usage), 0)
    assert.isDefined(pricing.priceOf("gpt-4o-2024-08-06"))
    assert.isUndefined(pricing.priceOf("local-llama"))
  })

  it.effect("warns once per missing model, from its first call that used tokens; never for a priced one", () =>
    Effect.gen(function*() {
      const pricing = makePricing(table)
      const logged: Array<string> = []
      const logger = Logger.make(({ message }) => {
        logged.push(String(Array.isArray(message) ? message[0] : message))
      })
      const warn = (model: string, used: typeof usage) => {
        const warning = pricing.unpricedWarning(model, used)
        return warning === undefined ? Effect.succeed(false) : Effect.as(warning, true)
      }
      const warned = yield* Effect.all([
        warn("gpt-4o", usage),
        warn("local-llama", { input: 0, output: 0, cached: 0 }),
        warn("local-llama", usage),
        warn("local-llama", usage),
        warn("other", usage)
      ]).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
      assert.deepStrictEqual(warned, [false, false, true, false, true])
      assert.deepStrictEqual(logged, [
        "model local-llama is not in the pricing table: its calls are counted at 0 USD",
        "model other is not in the pricing table: its calls are counted at 0 USD"
      ])
    }))
})
