import { Effect } from "effect"
import { suspectInjection } from "../domain/Injection.js"
import type { Tool } from "../domain/Tool.js"
import type { ToolResult } from "../domain/ToolCall.js"
import type { Provenance } from "../services/Policy.js"
import type { TurnDeps, TurnState } from "./TurnState.js"

/** Where a turn's content came from: the taint rule's input, and the record of suspected injections. */

export const provenanceOf = (state: TurnState): Provenance => ({
  untrustedSources: state.untrustedSources,
  untrustedHosts: state.untrustedHosts,
  userMessage: state.input.userMessage
})

const urlHost = /\bhttps?:\/\/([a-z0-9-]+(?:\.[a-z0-9-]+)+)/gi

/**
 * Untrusted content entering the turn taints it (issue 4): its source is remembered, and so is every host it
 * names that the user did not. A file or folder the user named is theirs, not untrusted.
 */
export const taint = (state: TurnState, tool: Tool, target: string, result: ToolResult): void => {
  if (!tool.external || result.status === "failed") return
  const message = state.input.userMessage
  if (tool.targetKind === "path" && target !== "." && message.includes(target)) return
  const source = result.source ?? tool.name
  if (!state.untrustedSources.includes(source)) state.untrustedSources.push(source)
  for (const match of result.content.matchAll(urlHost)) {
    const host = match[1]!.toLowerCase()
    if (!message.toLowerCase().includes(host)) state.untrustedHosts.add(host)
  }
}

/**
 * Untrusted content that looks like an injection attempt stays data (it is wrapped like any other) and is
 * recorded: in the trace's metadata and as an `injection_suspected` audit record for the digest.
 */
export const recordSuspicion = (deps: TurnDeps, state: TurnState, tool: Tool, result: ToolResult, at: number) => {
  if (!tool.external || result.status === "failed") return Effect.void
  const suspicion = suspectInjection(result.content)
  if (suspicion === undefined) return Effect.void
  const source = result.source ?? tool.name
  const seen = (state.metadata.injection_suspected ??= []) as Array<unknown>
  seen.push({ source, pattern: suspicion.pattern })
  return deps.audit.append({
    kind: "injection_suspected",
    at: new Date(at).toISOString(),
    trace_id: state.traceId,
    session_id: state.input.sessionId,
    sender: state.input.channel,
    source,
    pattern: suspicion.pattern,
    excerpt: suspicion.excerpt
  }).pipe(Effect.catchAll((error) => Effect.logError(`injection_suspected not recorded: ${error.message}`)))
}
