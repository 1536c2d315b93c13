import { assert, describe, it } from "@effect/vitest"
import { priceOf } from "../../src/domain/Pricing.js"
import { shippedPrices, withShippedPrices } from "../../src/domain/ShippedPrices.js"

const price = (inputPerMTok: number, outputPerMTok: number) => ({ inputPerMTok, cachedInputPerMTok: 0, outputPerMTok })

describe("priceOf", () => {
  it("a model is priced by its own entry, else by the longest entry its name extends", () => {
    assert.strictEqual(priceOf(shippedPrices, "gpt-4o"), shippedPrices["gpt-4o"])
    assert.strictEqual(priceOf(shippedPrices, "gpt-4o-2024-08-06"), shippedPrices["gpt-4o"])
    assert.strictEqual(priceOf(shippedPrices, "gpt-4o-mini-2024-07-18"), shippedPrices["gpt-4o-mini"])
    assert.strictEqual(priceOf(shippedPrices, "claude-sonnet-4-20250514"), shippedPrices["claude-sonnet-4"])
    assert.isUndefined(priceOf(shippedPrices, "llama3.1:8b"))
  })

  it("a shorter name is not priced as a longer model that happens to start with it", () => {
    // gpt-4 lists at 30/60 USD; gpt-4.1-mini at 0.4/1.6, which the budget would have counted 75 times too low.
    assert.isUndefined(priceOf(shippedPrices, "gpt-4"))
    assert.isUndefined(priceOf(shippedPrices, "claude-3"))
    assert.isUndefined(priceOf(shippedPrices, "o4"))
  })

  it("a name without its snapshot date is priced by its snapshots, the dearest when they differ", () => {
    const dated = { "claude-3-5-haiku-20241022": price(0.8, 4) }
    assert.strictEqual(priceOf(dated, "claude-3-5-haiku"), dated["claude-3-5-haiku-20241022"])
    const snapshots = {
      "gpt-4o-2024-08-06": price(2.5, 10),
      "gpt-4o-2024-05-13": price(5, 15),
      "gpt-4o-latest": price(2.5, 10),
      "gpt-4o-mini": price(0.15, 0.6)
    }
    assert.strictEqual(priceOf(snapshots, "gpt-4o"), snapshots["gpt-4o-2024-05-13"])
    // The snapshot is the same model: it wins over a family entry the name extends.
    const both = { "claude": price(3, 15), "claude-3-5-haiku@20241022": price(0.8, 4) }
    assert.strictEqual(priceOf(both, "claude-3-5-haiku"), both["claude-3-5-haiku@20241022"])
  })

  it("a configured family entry replaces the shipped entries it covers", () => {
    const prices = withShippedPrices({ "claude": price(1, 2) })
    assert.strictEqual(priceOf(prices, "claude-sonnet-4"), prices["claude"])
    assert.strictEqual(priceOf(prices, "gpt-4o"), shippedPrices["gpt-4o"])
  })
})
