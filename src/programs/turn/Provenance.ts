import { isInboxPath } from "../../domain/Inbox.js"
import { suspectInjection } from "../../domain/Injection.js"
import type { Tool } from "../../domain/Tool.js"
import type { ToolResult } from "../../domain/ToolCall.js"
import type { Provenance } from "../../services/Policy.js"
import type { TurnState } from "./TurnState.js"

/** Where a turn's content came from: the taint rule's input. */
export const provenanceOf = (state: TurnState): Provenance => ({
  untrustedSources: state.taint.sources,
  untrustedHosts: state.taint.hosts,
  userMessage: state.input.userMessage
})

const urlHost = /\bhttps?:\/\/([a-z0-9-]+(?:\.[a-z0-9-]+)+)/gi

/**
 * Untrusted content entering the turn taints it: its source is remembered, and so is every host it names that
 * the user did not. A file or folder the user named is theirs, not untrusted, unless it is in the inbox (received
 * from outside).
 */
export const taintOf = (userMessage: string, tool: Tool, target: string, result: ToolResult) => {
  if (!tool.external || result.status === "failed") return undefined
  if (tool.targetKind === "path" && target !== "." && !isInboxPath(target) && userMessage.includes(target)) {
    return undefined
  }
  const hosts: Array<string> = []
  for (const match of result.content.matchAll(urlHost)) {
    const host = match[1]!.toLowerCase()
    if (!userMessage.toLowerCase().includes(host) && !hosts.includes(host)) hosts.push(host)
  }
  return { source: result.source ?? tool.name, hosts }
}

/** Untrusted content that looks like an injection attempt: recorded (trace and audit), and wrapped like any other. */
export const suspicionOf = (tool: Tool, result: ToolResult) => {
  if (!tool.external || result.status === "failed") return undefined
  const suspicion = suspectInjection(result.content)
  return suspicion === undefined ? undefined : { source: result.source ?? tool.name, ...suspicion }
}
