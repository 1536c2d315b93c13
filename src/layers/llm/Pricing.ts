import { Effect } from "effect"
import type { ModelPrice } from "../../domain/AppConfig.js"
import type { Usage } from "../../domain/LlmTypes.js"
import { costUsd, priceOf } from "../../domain/Pricing.js"

/**
 * What a model call costs by the table's prices, as plain functions (every call is priced twice: to settle its
 * budget reservation and for its answer); only the warning about a model the table does not price is an effect.
 */
export interface Pricing {
  /** The model's price: its own entry or the closest prefix (looked up once per model). */
  readonly priceOf: (model: string) => ModelPrice | undefined
  /** Cost of one call in USD: uncached input, cached input and output at the model's prices per million tokens. */
  readonly usd: (model: string, usage: Usage) => number
  /**
   * The warning that a model is missing from the table (its calls are counted at 0 USD): once per model, for its
   * first call that used tokens; undefined otherwise.
   */
  readonly unpricedWarning: (model: string, usage: Usage) => Effect.Effect<void> | undefined
}

export const makePricing = (table: Readonly<Record<string, ModelPrice>>): Pricing => {
  const prices = new Map<string, ModelPrice | null>()
  const warned = new Set<string>()
  const price = (model: string): ModelPrice | undefined => {
    let known = prices.get(model)
    if (known === undefined) {
      known = priceOf(table, model) ?? null
      prices.set(model, known)
    }
    return known ?? undefined
  }
  return {
    priceOf: price,
    usd: (model, usage) => {
      const found = price(model)
      return found === undefined ? 0 : costUsd(found, usage)
    },
    unpricedWarning: (model, usage) => {
      if (price(model) !== undefined || warned.has(model) || (usage.input === 0 && usage.output === 0)) return undefined
      warned.add(model)
      return Effect.logWarning(`model ${model} is not in the pricing table: its calls are counted at 0 USD`)
    }
  }
}
