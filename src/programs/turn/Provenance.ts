import { Effect } from "effect"
import { hostsIn } from "../../domain/Hosts.js"
import { suspectInjection } from "../../domain/Injection.js"
import { ownWords } from "../../domain/Quoted.js"
import type { Tool } from "../../domain/Tool.js"
import type { ToolResult } from "../../domain/ToolCall.js"
import { Policy, type Provenance } from "../../services/Policy.js"
import { withService } from "../Services.js"
import type { TurnState } from "./TurnState.js"

/** Where a turn's content came from: the taint rule's input. */
export const provenanceOf = (state: TurnState): Provenance => ({
  untrustedSources: [
    ...state.taint.sources,
    ...state.taint.inherited.filter((s) => !state.taint.sources.includes(s)).map((s) => `${s} (earlier turn)`)
  ],
  untrustedHosts: state.taint.hosts,
  // What the owner wrote: a host named only in what the message quotes is not one the owner named.
  userMessage: state.input.quoted === undefined
    ? state.input.userMessage
    : ownWords(state.input.userMessage, state.input.quoted)
})

/** A failed result still carries outside content when it names its source (a command's output before it failed). */
const carriesContent = (result: ToolResult): boolean => result.status !== "failed" || result.source !== undefined

/**
 * Untrusted content entering the turn taints it: its source is remembered, and so is every host it names that
 * the user did not. Whoever named the file or page, its content is third-party text (a file name says which
 * document to read, not that its author is trusted); only a source the owner's policy declares trusted does
 * not taint, and that use is recorded. Undefined when the result brings no outside content (a local tool's):
 * nothing to ask the policy.
 */
export const taintOf = (
  userMessage: string,
  tool: Tool,
  result: ToolResult
): Effect.Effect<Taint, never, Policy> | undefined => {
  if (!tool.external || !carriesContent(result)) return undefined
  const source = result.source ?? tool.name
  return withService(Policy, (policy) =>
    Effect.map(policy.trustedSource(source), (rule): Taint => {
      if (rule !== undefined) return { trusted: { source, rule } }
      const named = hostsIn(userMessage)
      return { taint: { source, hosts: hostsIn(result.content).filter((host) => !named.includes(host)) } }
    }))
}

/** What a result brings to the turn's provenance: a source it trusts by a rule, or taint, or nothing. */
export type Taint =
  | { readonly trusted?: never; readonly taint?: never }
  | { readonly trusted: { readonly source: string; readonly rule: string } }
  | { readonly taint: { readonly source: string; readonly hosts: ReadonlyArray<string> } }

/** Untrusted content that looks like an injection attempt: recorded (trace and audit), and wrapped like any other. */
export const suspicionOf = (tool: Tool, result: ToolResult) => {
  if (!tool.external || !carriesContent(result)) return undefined
  const suspicion = suspectInjection(result.content)
  return suspicion === undefined ? undefined : { source: result.source ?? tool.name, ...suspicion }
}
