import { Context, Effect, Exit } from "effect"
import type { BudgetExceeded, LlmError } from "../domain/Errors.js"
import type { Tier } from "../domain/ExecutionTrace.js"
import type { LlmRequest, LlmResponse } from "../domain/LlmTypes.js"

export interface ProviderInfo {
  readonly tier: Tier
  readonly provider: string
  readonly model: string
}

/** What /health reports per provider (epoch milliseconds). */
export interface ProviderHealth extends ProviderInfo {
  readonly lastSuccessAt: number | null
  readonly lastError: { readonly reason: string; readonly message: string; readonly at: number } | null
  /** Until when it is tried last, after a failure; null when it is not cooling down. */
  readonly cooldownUntil: number | null
}

/** How a model call ended: its answer, or why there is none (its failure, a defect, an interruption). */
export type LlmOutcome<E = LlmError | BudgetExceeded> = Exit.Exit<LlmResponse, E>

/**
 * The port the loop talks to; the caller chooses the tier, the layer chooses the provider. `BudgetExceeded`:
 * the day's budget refused the call on every provider it would go to, so none was made.
 */
export class Llm extends Context.Tag("myclaw/Llm")<Llm, {
  readonly generate: (request: LlmRequest) => Effect.Effect<LlmResponse, LlmError | BudgetExceeded>
  /**
   * `generate`, its outcome handed to `then` by the handler that received it, before anything else runs: a
   * caller that goes on from the answer (the loop, for every Thought) keeps no handler of its own while it
   * waits for the model, and nothing can come between the answer and what it does with it.
   */
  readonly generateThen: <A, E, R>(
    request: LlmRequest,
    then: (outcome: LlmOutcome) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E, R>
  readonly providers: ReadonlyArray<ProviderInfo>
  readonly health: Effect.Effect<ReadonlyArray<ProviderHealth>>
}>() {}

/** `generateThen` for a model that has only `generate`: its outcome, handed on by one handler. */
export const generateThenOf = <Err>(
  generate: (request: LlmRequest) => Effect.Effect<LlmResponse, Err>
) =>
<A, E, R>(request: LlmRequest, then: (outcome: LlmOutcome<Err>) => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.matchCauseEffect(generate(request), {
    onSuccess: (response) => then(Exit.succeed(response)),
    onFailure: (cause) => then(Exit.failCause(cause))
  })
