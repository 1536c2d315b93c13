import type { Effect } from "effect"
import type { LlmError } from "../../domain/Errors.js"
import type { LlmRequest, LlmResponse } from "../../domain/LlmTypes.js"

/** What a provider adapter answers: the response before the tier layer stamps tier and cost. */
export type ProviderResponse = Omit<LlmResponse, "tier" | "costUsd">

/** One configured model endpoint; a tier is an ordered list of them. */
export interface Provider {
  readonly name: string
  readonly model: string
  readonly generate: (request: LlmRequest) => Effect.Effect<ProviderResponse, LlmError>
}
