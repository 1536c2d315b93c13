import { Effect, Layer } from "effect"
import type { LlmRequest } from "../../domain/LlmTypes.js"
import type { ScriptEntry } from "../../domain/ScriptEntry.js"
import { Budget } from "../../services/Budget.js"
import { Llm } from "../../services/Llm.js"
import { MyclawConfig } from "../../services/MyclawConfig.js"
import { makeLlmTiers, tierSettings } from "./LlmTiers.js"
import { makeScriptedProvider } from "./ScriptedProvider.js"

/** Both tiers served by one script, through the same tier layer as production (pricing included). */
export const LlmScripted = (entries: ReadonlyArray<ScriptEntry>, model = "scripted") =>
  Layer.effect(
    Llm,
    Effect.gen(function*() {
      const { config } = yield* MyclawConfig
      const provider = yield* makeScriptedProvider(entries, model)
      return makeLlmTiers({ frontier: [provider], "local-fast": [] }, tierSettings(config, "<scripted>"), yield* Budget)
    })
  )

/** An Llm whose every answer is computed from the request: for tests that inspect what the model saw. */
export const LlmFunction = (answer: (request: LlmRequest) => ScriptEntry) =>
  Layer.effect(
    Llm,
    Effect.gen(function*() {
      const { config } = yield* MyclawConfig
      const provider = {
        name: "function",
        model: "function",
        selfTimed: true,
        generate: (request: LlmRequest, timeoutMs: number) =>
          Effect.flatMap(makeScriptedProvider([answer(request)], "function"), (p) => p.generate(request, timeoutMs))
      }
      return makeLlmTiers({ frontier: [provider], "local-fast": [] }, tierSettings(config, "<function>"), yield* Budget)
    })
  )
