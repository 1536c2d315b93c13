import type { FileSystem, HttpClient } from "@effect/platform"
import { Config, type ConfigError, Effect, Layer, Option, Redacted } from "effect"
import type { AppConfig, ProviderConfig } from "../../domain/AppConfig.js"
import { type ConfigFileError, LlmError } from "../../domain/Errors.js"
import { priceOf } from "../../domain/Pricing.js"
import { withShippedPrices } from "../../domain/ShippedPrices.js"
import { Budget } from "../../services/Budget.js"
import { Llm } from "../../services/Llm.js"
import { MyclawConfig } from "../../services/MyclawConfig.js"
import { makeAnthropicProvider } from "./AnthropicProvider.js"
import { makeLlmTiers, type TierProviders, tierSettings } from "./LlmTiers.js"
import { makeOpenAiProvider } from "./OpenAiProvider.js"
import type { Provider } from "./Provider.js"
import { scriptedProviderFromFile } from "./ScriptedProvider.js"

/** The key named by `apiKeyEnv`, redacted; unset or empty means none (a local server needs none). */
const apiKey = (name: string) =>
  Effect.map(
    Config.option(Config.redacted(name)),
    Option.filter((key) => Redacted.value(key).trim() !== "")
  )

/** Hosted APIs, which refuse every call without a key (a local server needs none). */
const hostedApis = ["https://api.openai.com", "https://api.anthropic.com", "https://openrouter.ai"]

/**
 * A provider whose key variable is unset: a refusal for authentication names the variable and where the
 * configuration names it, instead of relaying the provider's 401 alone.
 */
const withoutKey = (provider: Provider, env: string, place: string): Provider => ({
  ...provider,
  generate: (request, timeoutMs) =>
    Effect.mapError(provider.generate(request, timeoutMs), (error) =>
      error.reason === "Auth"
        ? new LlmError({
          reason: error.reason,
          provider: error.provider,
          message: `${env} (named by ${place}.apiKeyEnv) is not set; ${error.message}`,
          ...(error.status === undefined ? {} : { status: error.status })
        })
        : error)
})

const buildProvider = (
  provider: ProviderConfig,
  configFile: string,
  place: string
): Effect.Effect<
  Provider,
  ConfigFileError | ConfigError.ConfigError,
  FileSystem.FileSystem | HttpClient.HttpClient
> => {
  if (provider.provider === "scripted") {
    return scriptedProviderFromFile(provider.script, configFile, provider.model, provider.loop)
  }
  return Effect.gen(function*() {
    const key = yield* apiKey(provider.apiKeyEnv)
    const built = provider.provider === "openai"
      ? yield* makeOpenAiProvider(provider, key)
      : yield* makeAnthropicProvider(provider, key)
    if (Option.isSome(key)) return built
    if (hostedApis.some((api) => provider.baseUrl.startsWith(api))) {
      yield* Effect.logWarning(
        `${provider.apiKeyEnv} (named by ${place}.apiKeyEnv) is not set: ${provider.baseUrl} will refuse every call`
      )
    }
    return withoutKey(built, provider.apiKeyEnv, place)
  })
}

/** Every configured provider, tier by tier, in the configured order (also what `myclaw doctor` checks). */
export const buildTierProviders = (config: AppConfig, configFile: string) =>
  Effect.gen(function*() {
    const build = (tier: "frontier" | "local-fast") =>
      Effect.forEach(
        config.tiers[tier],
        (provider, index) => buildProvider(provider, configFile, `tiers.${tier}[${index}]`)
      )
    return { frontier: yield* build("frontier"), "local-fast": yield* build("local-fast") }
  })

/** The tiers and providers named in the configuration: swapping a provider is a configuration change. */
export const LlmLive = Layer.effect(
  Llm,
  Effect.gen(function*() {
    const { config, file, loaded } = yield* MyclawConfig
    const tiers: TierProviders = yield* buildTierProviders(config, file)
    const prices = withShippedPrices(config.pricing)
    for (const tier of ["frontier", "local-fast"] as const) {
      for (const [index, provider] of config.tiers[tier].entries()) {
        if (provider.provider !== "scripted" && priceOf(prices, provider.model) === undefined) {
          yield* Effect.logWarning(
            `no price for model ${provider.model} (tiers.${tier}[${index}]): its calls count as free against the ` +
              `budget caps; add it under "pricing" in ${file}`
          )
        }
      }
    }
    if (loaded && tiers.frontier.length + tiers["local-fast"].length === 0) {
      yield* Effect.logWarning(`no LLM provider is configured: chat answers nothing until "tiers" is set in ${file}`)
    }
    return makeLlmTiers(tiers, tierSettings(config, file), yield* Budget)
  })
)

/** The Llm service over providers of your own (an embedding program's model, a benchmark's fake), tiered as usual. */
export const LlmProviders = (tiers: TierProviders) =>
  Layer.effect(
    Llm,
    Effect.gen(function*() {
      const { config, file } = yield* MyclawConfig
      return makeLlmTiers(tiers, tierSettings(config, file), yield* Budget)
    })
  )
