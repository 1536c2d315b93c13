import type { AuditRecordOf } from "./AuditRecord.js"
import type { ActionStep, ExecutionTrace } from "./ExecutionTrace.js"
import { cutAt } from "./Text.js"
import { isoAt } from "./Time.js"

const iso = (trace: ExecutionTrace, field: "started_at" | "finished_at"): string => {
  const value = trace[field]
  return value === null ? isoAt(0) : isoAt(value.epochMillis)
}

const summary = (step: ActionStep): string => {
  const args = step.args
  const text = args !== null && typeof args === "object" && "path" in args && typeof args.path === "string"
    ? args.path
    : JSON.stringify(args) ?? ""
  return text.length > 80 ? `${cutAt(text, 77)}...` : text
}

const outcomeOf = (step: ActionStep): string => {
  if (step.validation !== "ok") return step.validation
  if (step.exec_result !== null) return step.exec_result.status
  if (step.policy_decision === "deny") return "denied"
  if (step.approval !== null && !step.approval.granted) return "not_approved"
  return "not_run"
}

/** The summary of a closed trace for the audit log; the whole trace is in the trace store. */
export const traceRecord = (trace: ExecutionTrace): AuditRecordOf<"trace"> => {
  const actions = trace.steps.filter((step): step is ActionStep => step.kind === "action")
  const approvals = actions.filter((step) => step.approval !== null)
  return {
    kind: "trace",
    at: iso(trace, "finished_at"),
    trace_id: trace.trace_id,
    session_id: trace.session_id,
    channel: trace.channel.split(":")[0] ?? trace.channel,
    sender: trace.channel,
    started_at: iso(trace, "started_at"),
    finished_at: iso(trace, "finished_at"),
    user_message: trace.user_message,
    final_response: trace.final_response,
    steps_count: trace.steps.length,
    tool_calls: actions.map((step) => ({
      name: step.tool_name,
      args_summary: summary(step),
      outcome: outcomeOf(step)
    })),
    cost_usd: trace.cost_usd,
    wall_time_ms: trace.wall_time_ms,
    outcome: trace.outcome,
    approvals_requested:
      approvals.filter((step) => step.approval!.via !== "batch" && step.approval!.via !== "session").length,
    approvals_granted: approvals.filter((step) => step.approval!.granted).length
  }
}
