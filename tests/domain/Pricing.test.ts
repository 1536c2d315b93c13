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

  it("a later version of a family is priced as itself, not as the first version its name extends", () => {
    // Opus 4.5 and later list at a third of Opus 4's price: priced as claude-opus-4, the caps counted them 3x.
    const opus45 = priceOf(shippedPrices, "claude-opus-4-5-20251101")
    assert.deepStrictEqual([opus45?.inputPerMTok, opus45?.outputPerMTok, opus45?.cachedInputPerMTok], [5, 25, 0.5])
    assert.strictEqual(opus45?.cacheWritePerMTok, 6.25)
    for (const model of ["claude-opus-4-6", "claude-opus-4-7", "claude-opus-4-8", "claude-opus-5"]) {
      assert.strictEqual(priceOf(shippedPrices, model)?.inputPerMTok, 5, model)
    }
    assert.strictEqual(priceOf(shippedPrices, "claude-opus-4-1-20250805")?.inputPerMTok, 15)
    assert.strictEqual(priceOf(shippedPrices, "claude-opus-4-20250514")?.inputPerMTok, 15)
    // Haiku 4.5 had no entry: its calls cost 0 and the caps could not count them.
    const haiku = priceOf(shippedPrices, "claude-haiku-4-5-20251001")
    assert.deepStrictEqual([haiku?.inputPerMTok, haiku?.outputPerMTok, haiku?.cachedInputPerMTok], [1, 5, 0.1])
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
