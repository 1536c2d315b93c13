import type { ModelPrice } from "./AppConfig.js"

/**
 * List prices of common hosted models, in USD per million tokens, so that the caps count from the first call
 * without a `pricing` section. Prices change: an entry under `pricing` in myclaw.json replaces these for every
 * model name it matches, and a configured model with no price is warned about at start.
 */
export const shippedPricesSources = [
  { provider: "OpenAI", url: "https://openai.com/api/pricing/", read: "2025-06-01" },
  { provider: "Anthropic", url: "https://platform.claude.com/docs/en/about-claude/pricing", read: "2026-12-05" }
] as const

/** Opus 4.5 and later list at a third of Opus 4 and 4.1: each has its own entry, else it would be priced as those. */
const opusFrom45 = { inputPerMTok: 5, cachedInputPerMTok: 0.5, cacheWritePerMTok: 6.25, outputPerMTok: 25 }

export const shippedPrices: Readonly<Record<string, ModelPrice>> = {
  "gpt-4o": { inputPerMTok: 2.5, cachedInputPerMTok: 1.25, outputPerMTok: 10 },
  "gpt-4o-mini": { inputPerMTok: 0.15, cachedInputPerMTok: 0.075, outputPerMTok: 0.6 },
  "gpt-4.1": { inputPerMTok: 2, cachedInputPerMTok: 0.5, outputPerMTok: 8 },
  "gpt-4.1-mini": { inputPerMTok: 0.4, cachedInputPerMTok: 0.1, outputPerMTok: 1.6 },
  "gpt-4.1-nano": { inputPerMTok: 0.1, cachedInputPerMTok: 0.025, outputPerMTok: 0.4 },
  "o4-mini": { inputPerMTok: 1.1, cachedInputPerMTok: 0.275, outputPerMTok: 4.4 },
  "claude-3-5-haiku": { inputPerMTok: 0.8, cachedInputPerMTok: 0.08, cacheWritePerMTok: 1, outputPerMTok: 4 },
  "claude-3-7-sonnet": { inputPerMTok: 3, cachedInputPerMTok: 0.3, cacheWritePerMTok: 3.75, outputPerMTok: 15 },
  "claude-sonnet-4": { inputPerMTok: 3, cachedInputPerMTok: 0.3, cacheWritePerMTok: 3.75, outputPerMTok: 15 },
  "claude-opus-4": { inputPerMTok: 15, cachedInputPerMTok: 1.5, cacheWritePerMTok: 18.75, outputPerMTok: 75 },
  "claude-opus-4-1": { inputPerMTok: 15, cachedInputPerMTok: 1.5, cacheWritePerMTok: 18.75, outputPerMTok: 75 },
  "claude-opus-4-5": opusFrom45,
  "claude-opus-4-6": opusFrom45,
  "claude-opus-4-7": opusFrom45,
  "claude-opus-4-8": opusFrom45,
  "claude-opus-5": opusFrom45,
  "claude-haiku-4-5": { inputPerMTok: 1, cachedInputPerMTok: 0.1, cacheWritePerMTok: 1.25, outputPerMTok: 5 }
}

/**
 * The prices in force: the configured ones, and the shipped ones for model families the configuration does not
 * price (a configured `claude` key replaces every shipped `claude-*` entry, and `gpt-4o-2024-08-06` the shipped
 * `gpt-4o`).
 */
export const withShippedPrices = (
  configured: Readonly<Record<string, ModelPrice>>
): Readonly<Record<string, ModelPrice>> => {
  const keys = Object.keys(configured)
  const shipped = Object.entries(shippedPrices).filter(([name]) =>
    !keys.some((key) => key.startsWith(name) || name.startsWith(key))
  )
  return { ...Object.fromEntries(shipped), ...configured }
}
