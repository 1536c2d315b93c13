import type { FileSystem, HttpClient } from "@effect/platform"
import { Config, type ConfigError, Effect, Layer, Option, Redacted } from "effect"
import type { AppConfig, ProviderConfig } from "../../domain/AppConfig.js"
import type { ConfigFileError } from "../../domain/Errors.js"
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

const buildProvider = (
  provider: ProviderConfig,
  configFile: string
): Effect.Effect<
  Provider,
  ConfigFileError | ConfigError.ConfigError,
  FileSystem.FileSystem | HttpClient.HttpClient
> => {
  switch (provider.provider) {
    case "scripted":
      return scriptedProviderFromFile(provider.script, configFile, provider.model)
    case "openai":
      return Effect.flatMap(apiKey(provider.apiKeyEnv), (key) => makeOpenAiProvider(provider, key))
    case "anthropic":
      return Effect.flatMap(apiKey(provider.apiKeyEnv), (key) => makeAnthropicProvider(provider, key))
  }
}

/** Every configured provider, tier by tier, in the configured order (also what `myclaw doctor` checks). */
export const buildTierProviders = (config: AppConfig, configFile: string) =>
  Effect.gen(function*() {
    const build = (list: ReadonlyArray<ProviderConfig>) =>
      Effect.forEach(list, (provider) => buildProvider(provider, configFile))
    return { frontier: yield* build(config.tiers.frontier), "local-fast": yield* build(config.tiers["local-fast"]) }
  })

/** The tiers and providers named in the configuration: swapping a provider is a configuration change. */
export const LlmLive = Layer.effect(
  Llm,
  Effect.gen(function*() {
    const { config, file, loaded } = yield* MyclawConfig
    const tiers: TierProviders = yield* buildTierProviders(config, file)
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
