import { Effect, Layer } from "effect"
import type { ProviderConfig } from "../domain/AppConfig.js"
import { ConfigFileError } from "../domain/Errors.js"
import { Llm } from "../services/Llm.js"
import { MyclawConfig } from "../services/MyclawConfig.js"
import { scriptedProviderFromFile } from "./llm/ScriptedProvider.js"
import { makeLlmTiers, tierSettings } from "./LlmTiers.js"

/** The tiers and providers named in the configuration: swapping a provider is a configuration change. */
export const LlmLive = Layer.effect(
  Llm,
  Effect.gen(function*() {
    const { config, file, loaded } = yield* MyclawConfig
    const build = (providers: ReadonlyArray<ProviderConfig>) =>
      Effect.forEach(providers, (provider) => {
        switch (provider.provider) {
          case "scripted":
            return scriptedProviderFromFile(provider.script, file, provider.model)
          default:
            return Effect.fail(
              new ConfigFileError({ file, message: `provider "${provider.provider}" is being wired in (issue 3)` })
            )
        }
      })
    const frontier = yield* build(config.tiers.frontier)
    const localFast = yield* build(config.tiers["local-fast"])
    if (loaded && frontier.length + localFast.length === 0) {
      yield* Effect.logWarning(`no LLM provider is configured: chat answers nothing until "tiers" is set in ${file}`)
    }
    return makeLlmTiers({ frontier, "local-fast": localFast }, tierSettings(config, file))
  })
)
