import { DateTime } from "effect"
import type { ActionStep, ExecutionTrace, ThoughtStep } from "./ExecutionTrace.js"
import { truncateEnd } from "./Text.js"
import type { TraceListing } from "./TraceListing.js"

const usd = (value: number): string => `$${value.toFixed(4)}`
const oneLine = (text: string, max: number): string => truncateEnd(text.replace(/\s+/g, " ").trim(), max)
const json = (value: unknown): string => JSON.stringify(value) ?? "null"

const thoughtLines = (step: ThoughtStep, n: number): Array<string> => {
  const head = `  ${String(n).padStart(2)}. Thought  ${step.provider} (${step.tier}) ` +
    `${step.prompt_tokens}+${step.response_tokens} tokens${
      step.cached_tokens > 0 ? ` (${step.cached_tokens} cached)` : ""
    }` +
    `  ${usd(step.cost_usd)}  ${step.wall_ms} ms`
  const lines = [head]
  for (const attempt of step.failed_attempts) {
    lines.push(`        failed first: ${attempt.provider} ${attempt.reason}: ${oneLine(attempt.message, 80)}`)
  }
  if (step.text.trim() !== "") lines.push(`        says: ${oneLine(step.text, 100)}`)
  for (const call of step.tool_calls) {
    lines.push(`        calls ${call.name}(${oneLine(call.raw_arguments ?? json(call.args), 90)})`)
  }
  return lines
}

const actionLines = (step: ActionStep, n: number): Array<string> => {
  const lines = [
    `  ${String(n).padStart(2)}. Action   ${step.tool_name}(${oneLine(json(step.args), 80)})  ${step.wall_ms} ms`
  ]
  if (step.validation !== "ok") {
    lines.push(`        invalid (${step.validation}): ${oneLine(step.validation_error ?? "", 100)}`)
    return lines
  }
  lines.push(
    `        policy: ${step.policy_decision ?? "none"}${step.policy_reason === null ? "" : ` (${step.policy_reason})`}`
  )
  if (step.approval !== null) {
    lines.push(
      `        approval: ${step.approval.granted ? "granted" : "denied"} via ${step.approval.via}` +
        (step.approval.reason === "" ? "" : ` (${oneLine(step.approval.reason, 80)})`)
    )
  }
  if (step.exec_result !== null) {
    lines.push(`        result: ${step.exec_result.status}: ${oneLine(step.exec_result.content, 100)}`)
  } else if (step.error !== null) lines.push(`        not run: ${oneLine(step.error, 100)}`)
  return lines
}

/** A trace as a readable timeline: who asked what, each Thought and Action with its decision, result, cost and time. */
export const renderTimeline = (trace: ExecutionTrace): string => {
  const lines = [
    `trace ${trace.trace_id}  ${trace.outcome}`,
    `  session ${trace.session_id} on ${trace.channel}, started ${DateTime.formatIso(trace.started_at)}, ` +
    `${trace.wall_time_ms} ms, ${usd(trace.cost_usd)}`,
    `  user: ${oneLine(trace.user_message, 120)}`
  ]
  trace.steps.forEach((step, i) => {
    if (step.kind === "thought") lines.push(...thoughtLines(step, i + 1))
    else if (step.kind === "action") lines.push(...actionLines(step, i + 1))
    else {lines.push(
        `  ${String(i + 1).padStart(2)}. Critic   ${step.purpose}: ${step.verdict} (${oneLine(step.reason, 80)})`
      )}
  })
  lines.push(`  answer: ${trace.final_response === null ? "(none)" : oneLine(trace.final_response, 200)}`)
  const error = trace.metadata.error
  if (error !== undefined) lines.push(`  error: ${oneLine(typeof error === "string" ? error : json(error), 200)}`)
  return lines.join("\n")
}

/** Trace listings as a table, one line each. */
export const renderListing = (listings: ReadonlyArray<TraceListing>): string => {
  if (listings.length === 0) return "no traces"
  const width = Math.max(...listings.map((listing) => listing.trace_id.length))
  return listings.map((listing) =>
    `${listing.started_at.slice(0, 19).replace("T", " ")}  ${listing.trace_id.padEnd(width)}  ` +
    `${listing.outcome.padEnd(18)} ${String(listing.steps).padStart(3)} steps  ${usd(listing.cost_usd)}  ` +
    `${listing.session_id}  ${JSON.stringify(oneLine(listing.user_message, 60))}`
  ).join("\n")
}
