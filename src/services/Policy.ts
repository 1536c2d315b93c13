import { Context } from "effect"
import type { Effect } from "effect"
import type { PolicyRule } from "../domain/AppConfig.js"
import type { Tool } from "../domain/Tool.js"
import type { PolicyVerdict } from "../domain/ToolCall.js"

export interface PolicyDecision {
  readonly verdict: PolicyVerdict
  /** The rule that decided (`fs_write:notes/*`), or the built-in default that did. */
  readonly rule: string
  readonly reason: string
  readonly forceTier?: "frontier" | undefined
  /** Set when the turn carries untrusted content: the approval must be fresh (no grant covers it). */
  readonly taintedBy?: ReadonlyArray<string> | undefined
}

/** What the turn knows about where its content came from (the taint rule). */
export interface Provenance {
  /** Sources of untrusted content that entered the turn (`web:example.com`, `file:notes/x.md`). */
  readonly untrustedSources: ReadonlyArray<string>
  /** Hosts that first appeared in untrusted content. */
  readonly untrustedHosts: ReadonlySet<string>
  /** What the user wrote: a host or file they named themselves is theirs. */
  readonly userMessage: string
}

export interface PolicyInput {
  readonly tool: Tool
  readonly target: string
  readonly args: unknown
  readonly provenance: Provenance
}

/** allow / deny / approve_required for one validated tool call. */
export class Policy extends Context.Tag("myclaw/Policy")<Policy, {
  readonly evaluate: (input: PolicyInput) => Effect.Effect<PolicyDecision>
  /** Replaces the rules (a configuration reload); calls already approved are judged again at launch. */
  readonly setRules: (rules: ReadonlyArray<PolicyRule>) => Effect.Effect<void>
  /**
   * The `trusted` glob that vouches for a tool result's source (`file:notes/own/a.md`, `dir:notes/own`), if
   * any: such content does not taint the turn. Only workspace files and folders can be trusted.
   */
  readonly trustedSource: (source: string) => Effect.Effect<string | undefined>
}>() {}
