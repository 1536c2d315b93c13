import { Effect } from "effect"
import type { ModelPrice } from "../domain/AppConfig.js"
import { isTransient, LlmError } from "../domain/Errors.js"
import type { Tier } from "../domain/ExecutionTrace.js"
import type { LlmRequest, LlmResponse } from "../domain/LlmTypes.js"
import { Llm } from "../services/Llm.js"
import type { Provider } from "./llm/Provider.js"
import { makePricing } from "./llm/Pricing.js"

export type TierProviders = Readonly<Record<Tier, ReadonlyArray<Provider>>>

const otherTier: Record<Tier, Tier> = { frontier: "local-fast", "local-fast": "frontier" }

/**
 * The Llm service over configured tiers: providers of a tier are tried in order, moving on after a
 * transient failure; a tier with no provider borrows the other tier's; cost comes from the pricing table.
 */
export const makeLlmTiers = (
  tiers: TierProviders,
  pricing: Readonly<Record<string, ModelPrice>>,
  configFile: string
) => {
  const cost = makePricing(pricing)
  const providers = (["frontier", "local-fast"] as const).flatMap((tier) =>
    tiers[tier].map((p) => ({ tier, provider: p.name, model: p.model }))
  )

  const tryProviders = (list: ReadonlyArray<Provider>, request: LlmRequest, tier: Tier) => {
    const attempt = (index: number): Effect.Effect<LlmResponse, LlmError> =>
      list[index]!.generate(request).pipe(
        Effect.flatMap((response) =>
          Effect.map(cost(response.model, response.usage), (costUsd): LlmResponse => ({ ...response, tier, costUsd }))
        ),
        Effect.catchIf(
          (error) => isTransient(error) && index + 1 < list.length,
          (error) =>
            Effect.zipRight(
              Effect.logWarning(`${list[index]!.name} failed (${error.reason}): trying ${list[index + 1]!.name}`),
              attempt(index + 1)
            )
        )
      )
    return attempt(0)
  }

  const generate = (request: LlmRequest): Effect.Effect<LlmResponse, LlmError> => {
    const own = tiers[request.tier]
    if (own.length > 0) return tryProviders(own, request, request.tier)
    const borrowed = otherTier[request.tier]
    if (tiers[borrowed].length > 0) return tryProviders(tiers[borrowed], request, borrowed)
    return Effect.fail(
      new LlmError({
        reason: "NotConfigured",
        provider: "none",
        message: `no LLM provider is configured: add one under "tiers" in ${configFile}`
      })
    )
  }

  return Llm.of({ generate, providers })
}
