import { canonicalJson } from "./ArgsHash.js"
import type { ExecutionTrace, Outcome } from "./ExecutionTrace.js"
import { truncateEnd } from "./Text.js"

interface Side {
  readonly outcome: Outcome
  readonly tool_calls: ReadonlyArray<string>
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cost_usd: number
  readonly wall_ms: number
}

/** One recorded turn sent again to a live provider set: what it did then and now. */
export interface LiveReport {
  readonly trace_id: string
  readonly file: string | null
  readonly same_outcome: boolean
  /** The index of the first tool call that differs (name or arguments), null when the sequences are the same. */
  readonly departs_at: number | null
  readonly recorded: Side
  readonly live: Side
}

const sideOf = (trace: ExecutionTrace): Side => {
  let input = 0
  let output = 0
  const calls: Array<string> = []
  for (const step of trace.steps) {
    if (step.kind === "thought") {
      input += step.prompt_tokens
      output += step.response_tokens
    } else if (step.kind === "action") calls.push(`${step.tool_name}(${canonicalJson(step.args)})`)
  }
  return {
    outcome: trace.outcome,
    tool_calls: calls,
    input_tokens: input,
    output_tokens: output,
    cost_usd: trace.cost_usd,
    wall_ms: trace.wall_time_ms
  }
}

export const compareLive = (recorded: ExecutionTrace, live: ExecutionTrace, file: string | null): LiveReport => {
  const before = sideOf(recorded)
  const now = sideOf(live)
  const n = Math.max(before.tool_calls.length, now.tool_calls.length)
  let departs: number | null = null
  for (let i = 0; i < n && departs === null; i++) if (before.tool_calls[i] !== now.tool_calls[i]) departs = i
  return {
    trace_id: recorded.trace_id,
    file,
    same_outcome: before.outcome === now.outcome,
    departs_at: departs,
    recorded: before,
    live: now
  }
}

export interface LiveTotals {
  readonly traces: number
  readonly same_outcome: number
  readonly same_tool_calls: number
  readonly recorded: {
    readonly input_tokens: number
    readonly output_tokens: number
    readonly cost_usd: number
    readonly wall_ms: number
  }
  readonly live: {
    readonly input_tokens: number
    readonly output_tokens: number
    readonly cost_usd: number
    readonly wall_ms: number
  }
}

export const liveTotals = (reports: ReadonlyArray<LiveReport>): LiveTotals => {
  const sum = (pick: (report: LiveReport) => Side) => ({
    input_tokens: reports.reduce((total, report) => total + pick(report).input_tokens, 0),
    output_tokens: reports.reduce((total, report) => total + pick(report).output_tokens, 0),
    cost_usd: reports.reduce((total, report) => total + pick(report).cost_usd, 0),
    wall_ms: reports.reduce((total, report) => total + pick(report).wall_ms, 0)
  })
  return {
    traces: reports.length,
    same_outcome: reports.filter((report) => report.same_outcome).length,
    same_tool_calls: reports.filter((report) => report.departs_at === null).length,
    recorded: sum((report) => report.recorded),
    live: sum((report) => report.live)
  }
}

const usd = (value: number) => `$${value.toFixed(4)}`

/** Live eval reports as a table, then the totals recorded vs live. */
export const renderLive = (reports: ReadonlyArray<LiveReport>, name: (report: LiveReport) => string): string => {
  const width = Math.max(5, ...reports.map((report) => name(report).length))
  const lines = [
    `${
      "trace".padEnd(width)
    }  outcome (recorded -> live)           tool calls              tokens (in+out)        cost                   ms`
  ]
  for (const r of reports) {
    const outcome = `${r.recorded.outcome} -> ${r.live.outcome}${r.same_outcome ? "" : " (!)"}`
    const calls = r.departs_at === null
      ? "same"
      : `depart at #${r.departs_at + 1}: ${truncateEnd(r.recorded.tool_calls[r.departs_at] ?? "(none)", 40)} -> ${
        truncateEnd(r.live.tool_calls[r.departs_at] ?? "(none)", 40)
      }`
    lines.push(
      `${name(r).padEnd(width)}  ${outcome.padEnd(35)}  ${calls.padEnd(22)}  ` +
        `${r.recorded.input_tokens}+${r.recorded.output_tokens} -> ${r.live.input_tokens}+${r.live.output_tokens}`
          .padEnd(22) +
        ` ${usd(r.recorded.cost_usd)} -> ${usd(r.live.cost_usd)}  ${r.recorded.wall_ms} -> ${r.live.wall_ms}`
    )
  }
  const t = liveTotals(reports)
  lines.push(
    `${t.traces} traces: ${t.same_outcome} same outcome, ${t.same_tool_calls} same tool calls; ` +
      `tokens ${t.recorded.input_tokens}+${t.recorded.output_tokens} -> ${t.live.input_tokens}+${t.live.output_tokens}, ` +
      `cost ${usd(t.recorded.cost_usd)} -> ${
        usd(t.live.cost_usd)
      }, time ${t.recorded.wall_ms} ms -> ${t.live.wall_ms} ms`
  )
  return lines.join("\n")
}
