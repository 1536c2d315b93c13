import { Context } from "effect"
import type { Effect } from "effect"
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

/**
 * The port the loop talks to; the caller chooses the tier, the layer chooses the provider. `BudgetExceeded`:
 * the day's budget refused the call on every provider it would go to, so none was made.
 */
export class Llm extends Context.Tag("myclaw/Llm")<Llm, {
  readonly generate: (request: LlmRequest) => Effect.Effect<LlmResponse, LlmError | BudgetExceeded>
  readonly providers: ReadonlyArray<ProviderInfo>
  readonly health: Effect.Effect<ReadonlyArray<ProviderHealth>>
}>() {}
