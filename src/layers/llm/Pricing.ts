import { Effect } from "effect"
import type { ModelPrice } from "../../domain/AppConfig.js"
import type { Usage } from "../../domain/LlmTypes.js"
import { costUsd, priceOf } from "../../domain/Pricing.js"

/** Cost of one call in USD: uncached input, cached input and output at the model's prices per million tokens. */
export const makePricing = (table: Readonly<Record<string, ModelPrice>>) => {
  const warned = new Set<string>()
  return (model: string, usage: Usage): Effect.Effect<number> => {
    const price = priceOf(table, model)
    if (price !== undefined) return Effect.succeed(costUsd(price, usage))
    if (warned.has(model) || (usage.input === 0 && usage.output === 0)) return Effect.succeed(0)
    warned.add(model)
    return Effect.as(Effect.logWarning(`model ${model} is not in the pricing table: its calls are counted at 0 USD`), 0)
  }
}
