import { Context } from "effect"
import type { Effect } from "effect"
import type { TraceStoreError } from "../domain/Errors.js"
import type { ExecutionTrace } from "../domain/ExecutionTrace.js"

export interface TurnInput {
  readonly userMessage: string
  readonly sessionId: string
  /** e.g. `cli:alice`, `telegram:@alice`. */
  readonly channel: string
}

/** Runs one turn and returns its closed, persisted trace. */
export class AgentRuntime extends Context.Tag("myclaw/AgentRuntime")<AgentRuntime, {
  readonly handle: (input: TurnInput) => Effect.Effect<ExecutionTrace, TraceStoreError>
}>() {}
