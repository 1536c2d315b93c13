import { Clock, Context, Data, Effect, Either } from "effect"
import { argsHash, verifyApprovedArgs } from "../../domain/ArgsHash.js"
import type { AuditError } from "../../domain/Errors.js"
import type { ActionStep, ApprovalRecord } from "../../domain/ExecutionTrace.js"
import { isoAt } from "../../domain/Time.js"
import type { PreparedCall, Tool } from "../../domain/Tool.js"
import type { ToolCall, ToolResult } from "../../domain/ToolCall.js"
import { Approvals } from "../../services/Approvals.js"
import { AuditLog } from "../../services/AuditLog.js"
import { Policy, type PolicyDecision, type PolicyInput, type Provenance } from "../../services/Policy.js"
import { ToolRegistry } from "../../services/ToolRegistry.js"
import { services } from "../Services.js"

/** Who is calling: the turn's identity and what it knows about where its content came from. */
export interface GateContext {
  readonly traceId: string
  readonly sessionId: string
  readonly channel: string
  readonly provenance: Provenance
  /** Where the turn's content came from when the call launches (it may have grown while the owner was asked). */
  readonly provenanceAtLaunch?: Effect.Effect<Provenance> | undefined
}

interface Judged {
  readonly call: ToolCall
  readonly tool: Tool
  readonly prepared: PreparedCall
  readonly decision: PolicyDecision
}

/**
 * Where a tool call stands after the gates, in order: validation, policy, approval, the policy again at launch,
 * the write-ahead audit record. Only `Run` executes.
 */
export type Gate = Data.TaggedEnum<{
  Invalid: { readonly call: ToolCall; readonly validation: "unknown_tool" | "schema_error"; readonly message: string }
  /** Denied by the policy; with an approval when a rule turned to deny after the owner approved. */
  Denied: Judged & { readonly approval: ApprovalRecord | null }
  NotApproved: Judged & { readonly approval: ApprovalRecord }
  /** Approved, but for other arguments than these. */
  ArgsChanged: Judged & { readonly approval: ApprovalRecord }
  /** The write-ahead record could not be written: nothing runs. */
  AuditFailed: Judged & { readonly approval: ApprovalRecord | null; readonly error: AuditError }
  Run: Judged & { readonly approval: ApprovalRecord | null; readonly approvalRequestId: string | null }
}>
export const Gate = Data.taggedEnum<Gate>()
export type Run = Data.TaggedEnum.Value<Gate, "Run">

const writeAhead = Effect.fnUntraced(function*(
  context: GateContext,
  judged: Judged,
  approvalRequestId: string | null
) {
  const audit = yield* AuditLog
  return yield* audit.append({
    kind: "tool_decision",
    at: isoAt(yield* Clock.currentTimeMillis),
    trace_id: context.traceId,
    session_id: context.sessionId,
    sender: context.channel,
    tool_name: judged.tool.name,
    target: judged.prepared.target,
    args_hash: argsHash(judged.prepared.args),
    decision: judged.decision.verdict,
    rule: judged.decision.rule,
    approval_request_id: approvalRequestId
  })
})

// Every Gate below puts the keys it adds before `...judged`: added after a leading spread, each would give the
// object a hidden class of its own (V8 11).
/**
 * Every tool call passes here before it may run, whoever proposed it (a Thought, a cached plan, a replay). A
 * side-effecting call (or one the owner had to approve) runs only once its decision is durable in the audit log.
 */
export const gate = (call: ToolCall, context: GateContext) =>
  Effect.flatMap(
    services<ToolRegistry | Policy>(),
    (provided) => gateWith(Context.get(provided, ToolRegistry), Context.get(provided, Policy), call, context)
  )

/** `gate` with the registry and the policy already read: a turn reads them once, when it opens. */
export const gateWith = (
  registry: ToolRegistry["Type"],
  policy: Policy["Type"],
  call: ToolCall,
  context: GateContext
) => {
  const validated = registry.validate(call)
  if (validated._tag === "Invalid") {
    return Effect.succeed<Gate>(Gate.Invalid({ call, validation: validated.validation, message: validated.message }))
  }
  const { prepared, tool } = validated
  const input: PolicyInput = { tool, target: prepared.target, args: prepared.args, provenance: context.provenance }
  return Effect.flatMap(policy.evaluate(input), (decision) => {
    const judged: Judged = { call, tool, prepared, decision }
    // The common case, a read-only call the policy allows: decided here, no generator.
    if (decision.verdict === "allow" && !tool.hasSideEffects) {
      return Effect.succeed<Gate>(Gate.Run({ approval: null, approvalRequestId: null, ...judged }))
    }
    return judgedGate(context, judged, input, policy)
  })
}

/** A call the policy denied, or one that needs an approval or a write-ahead record before it may run. */
const judgedGate = Effect.fnUntraced(function*(
  context: GateContext,
  judged: Judged,
  input: PolicyInput,
  policy: Policy["Type"]
) {
  const { decision, prepared, tool } = judged
  if (decision.verdict === "deny") {
    yield* Effect.ignore(writeAhead(context, judged, null))
    return Gate.Denied({ approval: null, ...judged })
  }
  let approval: ApprovalRecord | null = null
  let approvalRequestId: string | null = null
  if (decision.verdict === "approve_required") {
    const verdict = yield* (yield* Approvals).request({
      tool: tool.name,
      summary: prepared.summary,
      target: prepared.target,
      effectClass: `${tool.name}:${prepared.target}`,
      args: prepared.args,
      argsHash: argsHash(prepared.args),
      reason: decision.reason,
      sessionId: context.sessionId,
      traceId: context.traceId,
      channel: context.channel,
      requester: context.channel,
      tainted: decision.taintedBy === undefined ? null : { sources: decision.taintedBy },
      ...(tool.targetKind === "command" ? { exactTarget: true } : {})
    })
    approval = { granted: verdict.granted, via: verdict.via, reason: verdict.reason }
    approvalRequestId = verdict.requestId
    if (!verdict.granted) return Gate.NotApproved({ ...judged, approval })
    if (!verifyApprovedArgs(verdict, prepared.args)) return Gate.ArgsChanged({ ...judged, approval })
    const provenance = context.provenanceAtLaunch === undefined ? input.provenance : yield* context.provenanceAtLaunch
    const atLaunch = yield* policy.evaluate({ ...input, provenance })
    if (atLaunch.verdict === "deny") return Gate.Denied({ approval, ...judged, decision: atLaunch })
    // The owner approved a call that followed the sources they were shown, not content that came in since.
    const unseen = (atLaunch.taintedBy ?? []).filter((source) => !(decision.taintedBy ?? []).includes(source))
    if (unseen.length > 0) {
      const newer = {
        verdict: "deny",
        rule: "builtin:taint-at-launch",
        reason: `untrusted content from ${unseen.join(", ")} entered the turn after the approval was asked`
      } as const
      return Gate.Denied({ approval, ...judged, decision: newer })
    }
  }
  const recorded = yield* Effect.either(writeAhead(context, judged, approvalRequestId))
  if (Either.isLeft(recorded)) return Gate.AuditFailed({ ...judged, approval, error: recorded.left })
  return Gate.Run({ approval, approvalRequestId, ...judged })
})

// The same few (rule, reason) pairs decide almost every call: each one's text is made once and shared by every
// ActionStep that records it (a parked conversation holds its steps, and a text made per step is a string each).
// Reasons that name a target or a source vary without bound, so past a fixed number of texts each step makes its
// own again.
const RULE_TEXTS_MAX = 1024
const ruleTexts = new Map<string, Map<string, string>>()
let ruleTextCount = 0
const ruleOf = (decision: PolicyDecision): string => {
  let byReason = ruleTexts.get(decision.rule)
  const known = byReason?.get(decision.reason)
  if (known !== undefined) return known
  const text = `${decision.rule}: ${decision.reason}`
  if (ruleTextCount >= RULE_TEXTS_MAX) return text
  if (byReason === undefined) {
    byReason = new Map()
    ruleTexts.set(decision.rule, byReason)
  }
  byReason.set(decision.reason, text)
  ruleTextCount++
  return text
}

/** Two JSON values that serialise to the same text: plain objects with the same keys in the same order, and so on. */
const sameJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false
    return true
  }
  if (Object.getPrototypeOf(a) !== Object.prototype || Object.getPrototypeOf(b) !== Object.prototype) return false
  const x = a as Record<string, unknown>
  const y = b as Record<string, unknown>
  const keys = Object.keys(x)
  const others = Object.keys(y)
  if (keys.length !== others.length) return false
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!
    if (key !== others[i] || !sameJson(x[key], y[key])) return false
  }
  return true
}

/**
 * The arguments an ActionStep records: the validated ones, which are mostly the model's own again (a decoded copy
 * of them); then the step keeps the call's object, which its Thought holds already, and a parked turn holds one.
 */
const recordedArgs = (call: ToolCall, prepared: PreparedCall): unknown =>
  sameJson(call.args, prepared.args) ? call.args : prepared.args

/**
 * The ActionStep of a call: before any result, or with the `result` of running it and how long that took. One
 * literal of every field, in the trace's order: a step made by spreading another (this function's own steps once
 * did) is copied through V8's slow path, several times the time of the literal, and every call makes its step.
 */
export const actionStep = (gate: Gate, result?: ToolResult, wallMs = 0): ActionStep => {
  if (gate._tag === "Invalid") {
    return {
      kind: "action",
      tool_call_id: gate.call.id,
      tool_name: gate.call.name,
      args: gate.call.args,
      validation: gate.validation,
      validation_error: gate.message,
      policy_decision: null,
      policy_reason: null,
      approval: null,
      exec_result: null,
      error: gate.message,
      wall_ms: 0
    }
  }
  return {
    kind: "action",
    tool_call_id: gate.call.id,
    tool_name: gate.call.name,
    args: recordedArgs(gate.call, gate.prepared),
    validation: "ok",
    validation_error: null,
    policy_decision: gate.decision.verdict,
    policy_reason: gate._tag === "ArgsChanged" ? null : ruleOf(gate.decision),
    approval: gate.approval,
    exec_result: result ?? null,
    error: result !== undefined
      ? result.status === "failed" ? result.content : null
      : gate._tag === "AuditFailed"
      ? `not run: the audit log could not record the decision (${gate.error.message})`
      : null,
    wall_ms: wallMs
  }
}

/** What the model is told about a call that did not run. */
export const refusalText = (gate: Exclude<Gate, Run>): string =>
  gate._tag === "Invalid" ? gate.message : actionStep(gate).error ?? `not run: ${gate._tag}`
