import type { Effect } from "effect"
import type { LlmError } from "../../domain/Errors.js"
import type { LlmRequest, LlmResponse } from "../../domain/LlmTypes.js"

/** What a provider adapter answers: the response before the tier layer stamps tier and cost. */
export type ProviderResponse = Omit<LlmResponse, "tier" | "costUsd" | "provider" | "failedAttempts">

/** One configured model endpoint; a tier is an ordered list of them. */
export interface Provider {
  readonly name: string
  readonly model: string
  readonly generate: (request: LlmRequest, timeoutMs: number) => Effect.Effect<ProviderResponse, LlmError>
  /**
   * An in-process provider that enforces `timeoutMs` itself, so the tier layer spares it the generic
   * timeout (a forked timer fiber per call, about 20 us: nothing next to a network call, most of a fake one).
   */
  readonly selfTimed?: boolean
  /** The most output tokens a call may produce (its `maxTokens`), for budget reservations. */
  readonly maxOutputTokens?: number
}
