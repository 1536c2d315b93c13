import { canonicalJson } from "./ArgsHash.js"
import type { ActionStep, ExecutionTrace, Outcome, TraceStep } from "./ExecutionTrace.js"
import type { ReplayProbe, RequestMismatch } from "./ReplayProbe.js"
import { truncateEnd } from "./Text.js"

/** Where a replay first departs from its recording. */
export type DivergenceKind = "request" | "step" | "tool_call" | "decision" | "result" | "outcome" | "answer"

export interface Divergence {
  /** The 1-based step of the recorded trace; null for the outcome and the answer. */
  readonly step: number | null
  readonly kind: DivergenceKind
  /** The field or part that differs, e.g. `messages[3]`, `policy_decision`, `exec_result`. */
  readonly what: string
  readonly recorded: unknown
  readonly replayed: unknown
}

export interface ToolCounts {
  readonly executed: number
  readonly served: number
  readonly dryRun: number
  readonly missing: number
}

/** The result of one replay: identical, or the first divergence with both sides. */
export interface ReplayReport {
  readonly trace_id: string
  readonly file: string | null
  readonly user_message: string
  readonly identical: boolean
  readonly outcome: { readonly recorded: Outcome; readonly replayed: Outcome }
  readonly divergence: Divergence | null
  /** Differences that do not count as a divergence (the system prompt built from the workspace's files). */
  readonly notes: ReadonlyArray<string>
  readonly tools: ToolCounts
  readonly replay_ms: number
}

const same = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b)

const messagesOf = (request: unknown): ReadonlyArray<unknown> | undefined => {
  const messages = (request as { messages?: unknown } | null | undefined)?.messages
  return Array.isArray(messages) ? messages : undefined
}

/** A request difference, with the first differing message on both sides when the recording kept the request. */
const requestDivergence = (step: number, mismatch: RequestMismatch): Divergence | undefined => {
  const parts = mismatch.parts.filter((part) => part !== "system")
  if (parts.length === 0) return undefined
  if (parts[0] === "messages") {
    const recorded = messagesOf(mismatch.recordedRequest)
    const replayed = messagesOf(mismatch.replayedRequest)!
    if (recorded !== undefined) {
      const n = Math.max(recorded.length, replayed.length)
      for (let i = 0; i < n; i++) {
        if (!same(recorded[i] ?? null, replayed[i] ?? null)) {
          return {
            step,
            kind: "request",
            what: `messages[${i}]`,
            recorded: recorded[i] ?? null,
            replayed: replayed[i] ?? null
          }
        }
      }
    }
    return {
      step,
      kind: "request",
      what: "messages",
      recorded: mismatch.recorded === undefined
        ? "(no fingerprint recorded)"
        : `${mismatch.recorded.message_count} messages, hash ${mismatch.recorded.messages}`,
      replayed: `${mismatch.replayed.message_count} messages, hash ${mismatch.replayed.messages}` +
        " (record with traces.recordRequests to see the messages themselves)"
    }
  }
  if (parts[0] === "tools") {
    const recorded = (mismatch.recordedRequest as { tools?: unknown } | undefined)?.tools
    const replayed = (mismatch.replayedRequest as { tools?: unknown }).tools
    const names = (tools: unknown) =>
      Array.isArray(tools) ? tools.map((tool) => (tool as { name?: unknown }).name) : undefined
    return {
      step,
      kind: "request",
      what: "tools",
      recorded: names(recorded) ?? `catalog hash ${mismatch.recorded?.tools ?? "(none)"}`,
      replayed: names(replayed) ?? mismatch.replayed.tools
    }
  }
  return { step, kind: "request", what: parts[0]!, recorded: "(recorded)", replayed: "(differs)" }
}

const actionFields: ReadonlyArray<[keyof ActionStep, DivergenceKind]> = [
  ["tool_name", "tool_call"],
  ["args", "tool_call"],
  ["validation", "decision"],
  ["validation_error", "decision"],
  ["policy_decision", "decision"],
  ["policy_reason", "decision"],
  ["approval", "decision"],
  ["exec_result", "result"],
  ["error", "result"]
]

const stepDivergence = (n: number, recorded: TraceStep | undefined, replayed: TraceStep | undefined) => {
  if (recorded === undefined || replayed === undefined || recorded.kind !== replayed.kind) {
    const shape = (step: TraceStep | undefined) =>
      step === undefined ? "(no step)" : step.kind === "action" ? `action ${step.tool_name}` : step.kind
    return { step: n, kind: "step", what: "step", recorded: shape(recorded), replayed: shape(replayed) } as Divergence
  }
  if (recorded.kind === "thought" && replayed.kind === "thought") {
    if (!same(recorded.tool_calls, replayed.tool_calls)) {
      return {
        step: n,
        kind: "tool_call",
        what: "tool_calls",
        recorded: recorded.tool_calls,
        replayed: replayed.tool_calls
      } as Divergence
    }
    if (recorded.text !== replayed.text) {
      return { step: n, kind: "answer", what: "text", recorded: recorded.text, replayed: replayed.text } as Divergence
    }
  }
  if (recorded.kind === "action" && replayed.kind === "action") {
    for (const [field, kind] of actionFields) {
      if (!same(recorded[field], replayed[field])) {
        return { step: n, kind, what: field, recorded: recorded[field], replayed: replayed[field] } as Divergence
      }
    }
  }
  return undefined
}

/**
 * The first place a replayed turn departs from its recording, step by step (the request of a Thought before its
 * answer), then the outcome and the answer; times and costs are not compared.
 */
export const compareTraces = (
  recorded: ExecutionTrace,
  replayed: ExecutionTrace,
  probe: ReplayProbe
): { readonly divergence: Divergence | null; readonly notes: ReadonlyArray<string> } => {
  const notes: Array<string> = []
  const n = Math.max(recorded.steps.length, replayed.steps.length)
  let thought = 0
  for (let i = 0; i < n; i++) {
    const step = recorded.steps[i]
    if (step?.kind === "thought" && replayed.steps[i]?.kind === "thought") {
      const mismatch = probe.requests.find((request) => request.thought === thought)
      thought++
      if (mismatch !== undefined) {
        if (mismatch.parts.includes("system")) {
          notes.push(
            `Thought ${thought}: the system prompt differs from the recording's (the workspace's prompt files)`
          )
        }
        const divergence = requestDivergence(i + 1, mismatch)
        if (divergence !== undefined) return { divergence, notes }
      }
    }
    const divergence = stepDivergence(i + 1, step, replayed.steps[i])
    if (divergence !== undefined) return { divergence, notes }
  }
  if (recorded.outcome !== replayed.outcome) {
    return {
      divergence: {
        step: null,
        kind: "outcome",
        what: "outcome",
        recorded: recorded.outcome,
        replayed: replayed.outcome
      },
      notes
    }
  }
  if (recorded.final_response !== replayed.final_response) {
    return {
      divergence: {
        step: null,
        kind: "answer",
        what: "final_response",
        recorded: recorded.final_response,
        replayed: replayed.final_response
      },
      notes
    }
  }
  return { divergence: null, notes }
}

const show = (value: unknown): string => {
  const text = typeof value === "string" ? value : JSON.stringify(value) ?? "null"
  return truncateEnd(text, 400)
}

/** A replay report as a person reads it. */
export const renderReport = (report: ReplayReport): string => {
  const lines = [
    `${report.identical ? "IDENTICAL" : "DIVERGED"}  trace ${report.trace_id}${
      report.file === null ? "" : ` (${report.file})`
    }`,
    `  outcome: recorded ${report.outcome.recorded}, replayed ${report.outcome.replayed}`
  ]
  const d = report.divergence
  if (d !== null) {
    lines.push(`  first divergence: ${d.step === null ? "at the end" : `step ${d.step}`}, ${d.kind}: ${d.what}`)
    lines.push(`    recorded: ${show(d.recorded)}`)
    lines.push(`    replayed: ${show(d.replayed)}`)
  }
  for (const note of report.notes) lines.push(`  note: ${note}`)
  const t = report.tools
  lines.push(
    `  tools: ${t.served} served from the recording, ${t.dryRun} dry runs, ${t.executed} run again, ` +
      `${t.missing} without a recorded result; ${report.replay_ms.toFixed(1)} ms`
  )
  return lines.join("\n")
}
