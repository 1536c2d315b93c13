import { Context } from "effect"
import type { Effect } from "effect"
import type { TraceStoreError, WorkspaceError } from "../domain/Errors.js"
import type { Message, SystemBlock } from "../domain/LlmTypes.js"
import type { SessionError, SessionHistory } from "../domain/Session.js"
import type { Tool } from "../domain/Tool.js"
import type { ToolResult } from "../domain/ToolCall.js"
import type { PastTurn } from "./TraceStore.js"

export interface Prompt {
  readonly system: ReadonlyArray<SystemBlock>
  readonly messages: ReadonlyArray<Message>
  /** The untrusted sources of the history it replays: the new turn starts tainted by them. */
  readonly taint: ReadonlyArray<string>
  /** The session's past turns it holds (what a replay of the turn gives its prompt again). */
  readonly history?: ReadonlyArray<PastTurn> | undefined
  /** The summary of the session's older turns it holds, if any. */
  readonly summary?: { readonly text: string; readonly taintedBy: ReadonlyArray<string> } | undefined
}

/**
 * Assembles the prompt blocks, stable first (constitution, identity, tools, long-term memory, then history and
 * the user message), and renders tool results for the model.
 */
export class PromptBuilder extends Context.Tag("myclaw/PromptBuilder")<PromptBuilder, {
  readonly build: (input: {
    readonly sessionId: string
    /** The sender: a session of another owner is refused (`SessionError` Forbidden). */
    readonly channel: string
    readonly userMessage: string
    /** The session's history as the caller read it for this sender just before: not read a second time. */
    readonly history?: SessionHistory | undefined
  }) => Effect.Effect<Prompt, WorkspaceError | TraceStoreError | SessionError>
  /**
   * Truncated to 2 KB (head and tail) and, for external tools, wrapped in an unforgeable `<untrusted>`
   * stamped with `retrievedAt` (epoch milliseconds).
   */
  readonly renderToolResult: (tool: Tool, result: ToolResult, retrievedAt: number) => Effect.Effect<string>
}>() {}
