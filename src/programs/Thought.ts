import { Clock, Effect } from "effect"
import type { BudgetExceeded, LlmError } from "../domain/Errors.js"
import type { Tier } from "../domain/ExecutionTrace.js"
import type { LlmResponse } from "../domain/LlmTypes.js"
import type { TurnDeps, TurnState } from "./TurnState.js"

export type ThoughtResult =
  | { readonly _tag: "Answered"; readonly response: LlmResponse }
  | { readonly _tag: "Failed"; readonly error: LlmError | BudgetExceeded }

/**
 * The Thought: one LLM call on the chosen tier (the Llm layer times out, retries and fails over within the
 * tier, and reserves and settles its cost in the day's budget). Records the ThoughtStep and its cost.
 */
export const think = Effect.fn("Turn.thought")(function*(deps: TurnDeps, state: TurnState, tier: Tier) {
  yield* Effect.annotateCurrentSpan({ "gen_ai.operation.name": "chat", "myclaw.tier": tier })
  const started = yield* Clock.currentTimeMillis
  const result = yield* Effect.either(deps.llm.generate({
    tier,
    system: state.system,
    messages: state.messages,
    tools: deps.registry.catalog
  }))
  if (result._tag === "Left") {
    yield* Effect.annotateCurrentSpan({
      "error.type": result.left._tag === "LlmError" ? result.left.reason : result.left._tag
    })
    return { _tag: "Failed", error: result.left } as const satisfies ThoughtResult
  }
  const response = result.right
  yield* Effect.annotateCurrentSpan({
    "gen_ai.provider.name": response.provider.split(":")[0]!,
    "gen_ai.request.model": response.model,
    "gen_ai.response.model": response.model,
    "gen_ai.usage.input_tokens": response.usage.input,
    "gen_ai.usage.output_tokens": response.usage.output,
    "gen_ai.usage.cached_input_tokens": response.usage.cached,
    "gen_ai.response.finish_reasons": [response.finishReason],
    "myclaw.tier": response.tier,
    "myclaw.cost_usd": response.costUsd
  })
  const finished = yield* Clock.currentTimeMillis
  state.steps.push({
    kind: "thought",
    model: response.model,
    provider: response.provider,
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
    failed_attempts: response.failedAttempts
  })
  state.costUsd += response.costUsd
  return { _tag: "Answered", response } as const satisfies ThoughtResult
})
