import { Context } from "effect"
import type { Effect } from "effect"
import type { TraceStoreError } from "../domain/Errors.js"
import type { ExecutionTrace } from "../domain/ExecutionTrace.js"
import type { QuotedText } from "../domain/Quoted.js"

export interface TurnInput {
  readonly userMessage: string
  readonly sessionId: string
  /** e.g. `cli:alice`, `telegram:@alice`. */
  readonly channel: string
  /**
   * Text the channel quoted inside the message (a forwarded message, the message a reply answers): not the owner's
   * words. Someone else's taints the turn from its start.
   */
  readonly quoted?: ReadonlyArray<QuotedText> | undefined
}

/** Runs one turn and returns its closed, persisted trace. */
export class AgentRuntime extends Context.Tag("myclaw/AgentRuntime")<AgentRuntime, {
  readonly handle: (input: TurnInput) => Effect.Effect<ExecutionTrace, TraceStoreError>
}>() {}
