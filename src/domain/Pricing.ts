import type { ModelPrice } from "./AppConfig.js"
import type { Usage } from "./LlmTypes.js"

/** What a dated snapshot or the latest alias adds to a model's name: the same model under a longer name. */
const snapshotSuffix = /^[-@](\d{8}|\d{4}-\d{2}-\d{2}|latest)$/

/**
 * The price of a model: its own entry; else, for a name without its snapshot (`claude-3-5-haiku` priced as
 * `claude-3-5-haiku-20241022`), its snapshots' entry, the dearest when they differ, so that the caps never count
 * less than a call may cost; else the longest entry its name extends (providers answer `gpt-4o-2024-08-06` for a
 * configured `gpt-4o`; `claude-sonnet-4` covers the family). A name is never priced as a longer model that merely
 * starts with it: `gpt-4` is not `gpt-4.1-mini`.
 */
export const priceOf = (table: Readonly<Record<string, ModelPrice>>, model: string): ModelPrice | undefined => {
  const exact = table[model]
  if (exact !== undefined) return exact
  let dearest: ModelPrice | undefined
  let best: string | undefined
  for (const key of Object.keys(table)) {
    const price = table[key]
    if (price === undefined) continue
    if (key.startsWith(model) && snapshotSuffix.test(key.slice(model.length))) {
      if (
        dearest === undefined || price.inputPerMTok + price.outputPerMTok > dearest.inputPerMTok + dearest.outputPerMTok
      ) {
        dearest = price
      }
    } else if (model.startsWith(key) && (best === undefined || key.length > best.length)) {
      best = key
    }
  }
  return dearest ?? (best === undefined ? undefined : table[best])
}

export const costUsd = (price: ModelPrice, usage: Usage): number => {
  const cached = Math.min(usage.cached, usage.input)
  const written = Math.min(usage.cacheWrite ?? 0, usage.input - cached)
  return ((usage.input - cached - written) * price.inputPerMTok + cached * price.cachedInputPerMTok +
    written * (price.cacheWritePerMTok ?? price.inputPerMTok) + usage.output * price.outputPerMTok) / 1_000_000
}
