import { Clock, Duration, Effect, Schedule } from "effect"
import { isTransient, LlmError } from "../domain/Errors.js"
import type { Tier } from "../domain/ExecutionTrace.js"
import type { LlmResponse } from "../domain/LlmTypes.js"
import type { TurnDeps, TurnState } from "./TurnState.js"

export type ThoughtResult =
  | { readonly _tag: "Answered"; readonly response: LlmResponse }
  | { readonly _tag: "Failed"; readonly error: LlmError }

/**
 * The Thought: one LLM call on the chosen tier, with a timeout per attempt and at most `retries.max`
 * retries (exponential backoff with jitter) on transient errors. Records the ThoughtStep and its cost.
 */
export const think = Effect.fnUntraced(function*(deps: TurnDeps, state: TurnState, tier: Tier) {
  const { llmMs } = deps.config.timeouts
  const started = yield* Clock.currentTimeMillis
  let failures = 0
  const attempt = deps.llm.generate({
    tier,
    system: state.system,
    messages: state.messages,
    tools: deps.registry.catalog
  }).pipe(
    Effect.timeoutFail({
      duration: Duration.millis(llmMs),
      onTimeout: () => new LlmError({ reason: "Timeout", provider: tier, message: `no answer within ${llmMs} ms` })
    }),
    Effect.tapError(() => Effect.sync(() => failures++))
  )
  const schedule = Schedule.exponential(Duration.millis(deps.config.retries.baseDelayMs), 2).pipe(
    Schedule.jittered,
    Schedule.intersect(Schedule.recurs(deps.config.retries.max))
  )
  const result = yield* Effect.either(Effect.retry(attempt, { schedule, while: isTransient }))
  if (result._tag === "Left") {
    return { _tag: "Failed", error: result.left } as const satisfies ThoughtResult
  }
  const response = result.right
  const finished = yield* Clock.currentTimeMillis
  state.steps.push({
    kind: "thought",
    model: response.model,
    tier: response.tier,
    prompt_tokens: response.usage.input,
    cached_tokens: response.usage.cached,
    response_tokens: response.usage.output,
    finish_reason: response.finishReason,
    text: response.text,
    tool_call: response.toolCalls[0] ?? null,
    tool_calls: response.toolCalls,
    cost_usd: response.costUsd,
    wall_ms: finished - started,
    retries: failures
  })
  state.costUsd += response.costUsd
  if (response.costUsd > 0) yield* deps.budget.record(response.costUsd)
  return { _tag: "Answered", response } as const satisfies ThoughtResult
})
