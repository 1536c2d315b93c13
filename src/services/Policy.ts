import { Context } from "effect"
import type { Effect } from "effect"
import type { Tool } from "../domain/Tool.js"
import type { PolicyVerdict } from "../domain/ToolCall.js"

export interface PolicyDecision {
  readonly verdict: PolicyVerdict
  /** The rule that decided (`fs_write:notes/*`), or the built-in default that did. */
  readonly rule: string
  readonly reason: string
  readonly forceTier?: "frontier" | undefined
}

export interface PolicyInput {
  readonly tool: Tool
  readonly target: string
  readonly args: unknown
}

/** allow / deny / approve_required for one validated tool call (DESIGN section 7). */
export class Policy extends Context.Tag("myclaw/Policy")<Policy, {
  readonly evaluate: (input: PolicyInput) => Effect.Effect<PolicyDecision>
}>() {}
