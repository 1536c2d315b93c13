import { Effect, Fiber, Logger, LogLevel, Option, TestClock } from "effect"
import { LlmError, type LlmFailure } from "../../../src/domain/Errors.js"
import type { LlmRequest } from "../../../src/domain/LlmTypes.js"
import type { TierSettings } from "../../../src/layers/llm/LlmTiers.js"
import type { Provider, ProviderResponse } from "../../../src/layers/llm/Provider.js"

export type Answer = ProviderResponse | LlmFailure | { readonly reason: LlmFailure; readonly retryAfterMs: number }

/** A provider answering from a list, recording when (on the Effect clock) each call came. */
export const fake = (name: string, answers: ReadonlyArray<Answer>) => {
  const calls: Array<number> = []
  const provider: Provider = {
    name,
    model: name,
    generate: () =>
      Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeMillis), (now) => {
        const answer = answers[calls.length] ?? "BadResponse"
        calls.push(now)
        if (typeof answer === "string") {
          return Effect.fail(new LlmError({ reason: answer, provider: name, message: answer }))
        }
        if ("reason" in answer) {
          return Effect.fail(
            new LlmError({
              reason: answer.reason,
              provider: name,
              message: "slow down",
              retryAfterMs: answer.retryAfterMs
            })
          )
        }
        return Effect.succeed(answer)
      })
  }
  return { provider, calls }
}

/** A provider whose every call is `outcome` (made when the call comes), counting its calls in `calls.count`. */
export const counting = (name: string, outcome: () => Effect.Effect<ProviderResponse, LlmError>) => {
  const calls = { count: 0 }
  const provider: Provider = {
    name,
    model: name,
    generate: () =>
      Effect.suspend(() => {
        calls.count++
        return outcome()
      })
  }
  return { provider, calls }
}

export const ok = (text: string): ProviderResponse => ({
  model: "m",
  text,
  toolCalls: [],
  usage: { input: 10, output: 1, cached: 0 },
  finishReason: "stop"
})

export const settings: TierSettings = {
  pricing: {},
  timeoutMs: 60_000,
  retries: { max: 2, baseDelayMs: 500 },
  configFile: "myclaw.json"
}

export const request: LlmRequest = {
  tier: "frontier",
  system: [],
  messages: [{ role: "user", content: "hi" }],
  tools: []
}

/** Runs the call in a fiber and moves the test clock 100 ms at a time until it is done. */
export const settle = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(effect)
    for (let i = 0; i < 10_000 && Option.isNone(yield* Fiber.poll(fiber)); i++) yield* TestClock.adjust("100 millis")
    return yield* Fiber.join(fiber)
  }).pipe(Logger.withMinimumLogLevel(LogLevel.None))

/** A request with half of an emoji (a lone surrogate) in each kind of text it carries: what the wire must mend. */
export const cutEmojiRequest = (callId: string): LlmRequest => ({
  tier: "frontier",
  system: [{ name: "memory", text: "note \udbff", stable: true }],
  messages: [
    { role: "user", content: "ends cut \ud83d" },
    { role: "assistant", content: "", toolCalls: [{ id: callId, name: "weather", args: { city: "Rome" } }] },
    { role: "tool", toolCallId: callId, name: "weather", content: "\ude00 starts cut, 😀 whole", isError: false },
    { role: "assistant", content: "half \ud83d", toolCalls: [] }
  ],
  tools: []
})
