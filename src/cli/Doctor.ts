import { Clock, Console, Duration, Effect } from "effect"
import { llmTimeout } from "../domain/Errors.js"
import type { Tier } from "../domain/ExecutionTrace.js"
import type { LlmRequest } from "../domain/LlmTypes.js"
import { cutAt } from "../domain/Text.js"
import { buildTierProviders } from "../layers/llm/LlmLive.js"
import { MyclawConfig } from "../services/MyclawConfig.js"
import { Workspace } from "../services/Workspace.js"

const probe = (tier: Tier): LlmRequest => ({
  tier,
  system: [],
  messages: [{ role: "user", content: "Reply with the single word: ok" }],
  tools: [],
  maxTokens: 16
})

/**
 * `myclaw doctor`: checks the configuration, then proves inference works with one tiny real completion on
 * every configured provider of every tier, printing what answered, how fast and for how many tokens, or the
 * exact error. Exit code 1 when any provider fails or none is configured.
 */
export const doctor = Effect.gen(function*() {
  const { config, file, loaded } = yield* MyclawConfig
  const workspace = yield* Workspace
  yield* Console.log(`configuration  ${file}${loaded ? "" : " (missing: the defaults are in force)"}`)
  yield* Console.log(`workspace      ${workspace.root}`)
  const tiers = yield* buildTierProviders(config, file)
  let failures = 0
  let providers = 0
  for (const tier of ["frontier", "local-fast"] as const) {
    if (tiers[tier].length === 0) {
      yield* Console.log(`${tier.padEnd(10)}     (no provider${tier === "local-fast" ? ": borrows frontier's" : ""})`)
      continue
    }
    for (const provider of tiers[tier]) {
      providers++
      const started = yield* Clock.currentTimeMillis
      const result = yield* provider.generate(probe(tier), config.timeouts.llmMs).pipe(
        Effect.timeoutFail({
          duration: Duration.millis(config.timeouts.llmMs),
          onTimeout: () => llmTimeout(provider.name, config.timeouts.llmMs)
        }),
        Effect.either
      )
      const ms = (yield* Clock.currentTimeMillis) - started
      const label = `${tier.padEnd(10)}     ${provider.name.padEnd(32)}`
      if (result._tag === "Right") {
        const { model, text, usage } = result.right
        yield* Console.log(
          `${label} ok      model ${model} · ${ms} ms · ${usage.input} tokens in, ${usage.output} out · said ${
            JSON.stringify(cutAt(text, 40))
          }`
        )
      } else {
        failures++
        yield* Console.log(`${label} FAILED  ${result.left.reason}: ${result.left.message}`)
      }
    }
  }
  if (providers === 0) {
    yield* Console.log(`no LLM provider is configured: add one under "tiers" in ${file}`)
    return 1
  }
  return failures === 0 ? 0 : 1
})
