import { Effect } from "effect"
import type { ModelPrice } from "../../domain/AppConfig.js"
import type { Usage } from "../../domain/LlmTypes.js"

/**
 * The price of a model: its own entry, else the longest entry that is a prefix of its name or that it is a
 * prefix of (providers answer `gpt-4o-2024-08-06` for a configured `gpt-4o`).
 */
export const priceOf = (table: Readonly<Record<string, ModelPrice>>, model: string): ModelPrice | undefined => {
  const exact = table[model]
  if (exact !== undefined) return exact
  let best: string | undefined
  for (const key of Object.keys(table)) {
    if ((model.startsWith(key) || key.startsWith(model)) && (best === undefined || key.length > best.length)) best = key
  }
  return best === undefined ? undefined : table[best]
}

export const costUsd = (price: ModelPrice, usage: Usage): number => {
  const cached = Math.min(usage.cached, usage.input)
  const written = Math.min(usage.cacheWrite ?? 0, usage.input - cached)
  return ((usage.input - cached - written) * price.inputPerMTok + cached * price.cachedInputPerMTok +
    written * (price.cacheWritePerMTok ?? price.inputPerMTok) + usage.output * price.outputPerMTok) / 1_000_000
}

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
