import type { ModelPrice } from "./AppConfig.js"
import type { Usage } from "./LlmTypes.js"

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
