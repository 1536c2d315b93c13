import { Clock, Effect } from "effect"
import { argsHash, verifyApprovedArgs } from "../domain/ArgsHash.js"
import type { ActionStep } from "../domain/ExecutionTrace.js"
import type { ToolCall, ToolResult } from "../domain/ToolCall.js"
import type { PolicyDecision } from "../services/Policy.js"
import type { Validated } from "../services/ToolRegistry.js"
import { provenanceOf, recordSuspicion, taint } from "./Provenance.js"
import type { End, TurnDeps, TurnState } from "./TurnState.js"
import { recordingEdits } from "./WorkspaceEdits.js"

type Valid = Extract<Validated, { readonly _tag: "Valid" }>

interface Runnable {
  readonly valid: Valid
  readonly decision: PolicyDecision
  readonly approval: ActionStep["approval"]
}

const actionStep = (call: ToolCall, fields: Partial<ActionStep>): ActionStep => ({
  kind: "action",
  tool_call_id: call.id,
  tool_name: call.name,
  args: call.args,
  validation: "ok",
  validation_error: null,
  policy_decision: null,
  policy_reason: null,
  approval: null,
  exec_result: null,
  error: null,
  wall_ms: 0,
  ...fields
})

/** The GenAI `execute_tool` attributes of a call, with the policy's decision and the approval. */
const actionAttributes = (step: ActionStep) => ({
  "gen_ai.operation.name": "execute_tool",
  "gen_ai.tool.name": step.tool_name,
  "gen_ai.tool.call.id": step.tool_call_id,
  "myclaw.validation": step.validation,
  "myclaw.policy.decision": step.policy_decision ?? "none",
  "myclaw.approval": step.approval === null
    ? "none"
    : `${step.approval.granted ? "granted" : "denied"}:${step.approval.via}`,
  "myclaw.tool.status": step.exec_result?.status ?? "not_run"
})

/** Records a call that never ran (invalid, denied, not approved, not audited) with its `Turn.action` span. */
const notRun = (state: TurnState, step: ActionStep) =>
  Effect.withSpan(Effect.sync(() => state.steps.push(step)), "Turn.action", { attributes: actionAttributes(step) })

/**
 * The Action phase for the tool calls of one Thought, in the order the model gave them: validate, ask the
 * policy, ask for approval, execute, observe. Consecutive read-only calls that need no approval run
 * concurrently; anything else runs alone, after everything before it. Returns true when the turn ended.
 */
export const runActions = Effect.fnUntraced(
  function*(deps: TurnDeps, state: TurnState, calls: ReadonlyArray<ToolCall>, end: End) {
    let batch: Array<Runnable> = []
    const flush = Effect.suspend(() => {
      if (batch.length === 0) return Effect.void
      const runnables = batch
      batch = []
      return Effect.flatMap(
        Effect.forEach(runnables, (r) => execute(deps, r), { concurrency: runnables.length === 1 ? 1 : "unbounded" }),
        (results) =>
          Effect.forEach(results, (result, i) => observe(deps, state, runnables[i]!, result), { discard: true })
      )
    })

    for (const call of calls) {
      const validated = deps.registry.validate(call)
      if (validated._tag === "Invalid") {
        yield* flush
        yield* notRun(
          state,
          actionStep(call, {
            validation: validated.validation,
            validation_error: validated.message,
            error: validated.message
          })
        )
        state.messages.push({
          role: "tool",
          toolCallId: call.id,
          name: call.name,
          content: validated.message,
          isError: true
        })
        if (++state.invalidStreak >= 2) {
          return end("tool_hallucination", "I stopped: the model made two invalid tool calls in a row.")
        }
        continue
      }
      state.invalidStreak = 0
      const { prepared, tool } = validated
      const policyInput = { tool, target: prepared.target, args: prepared.args, provenance: provenanceOf(state) }
      const decision = yield* deps.policy.evaluate(policyInput)
      if (decision.forceTier === "frontier") state.forceFrontier = true
      if (decision.verdict === "deny") {
        yield* flush
        yield* Effect.ignore(writeAhead(deps, state, validated, decision, null))
        yield* notRun(
          state,
          actionStep(call, {
            args: prepared.args,
            policy_decision: "deny",
            policy_reason: `${decision.rule}: ${decision.reason}`
          })
        )
        return end(
          "policy_denied",
          `I did not run ${tool.name} on ${
            prepared.target || "its target"
          }: denied by the policy rule "${decision.rule}" (${decision.reason}).`
        )
      }
      if (decision.verdict === "allow" && !tool.hasSideEffects) {
        batch.push({ valid: validated, decision, approval: null })
        continue
      }
      yield* flush
      let approval: ActionStep["approval"] = null
      let approvalRequestId: string | null = null
      if (decision.verdict === "approve_required") {
        const verdict = yield* deps.approvals.request({
          tool: tool.name,
          summary: prepared.summary,
          target: prepared.target,
          effectClass: `${tool.name}:${prepared.target}`,
          args: prepared.args,
          argsHash: argsHash(prepared.args),
          reason: decision.reason,
          sessionId: state.input.sessionId,
          traceId: state.traceId,
          channel: state.input.channel,
          requester: state.input.channel,
          tainted: decision.taintedBy === undefined ? null : { sources: decision.taintedBy }
        })
        approval = { granted: verdict.granted, via: verdict.via, reason: verdict.reason }
        approvalRequestId = verdict.requestId
        if (!verdict.granted) {
          yield* notRun(
            state,
            actionStep(call, {
              args: prepared.args,
              policy_decision: "approve_required",
              policy_reason: `${decision.rule}: ${decision.reason}`,
              approval
            })
          )
          return end(
            "user_aborted",
            `I did not run ${tool.name}: ${prepared.summary} was not approved (${verdict.reason}).`
          )
        }
        if (!verifyApprovedArgs(verdict, prepared.args)) {
          yield* notRun(state, actionStep(call, { args: prepared.args, policy_decision: "approve_required", approval }))
          return end("user_aborted", `I did not run ${tool.name}: its arguments are not the ones that were approved.`)
        }
        // Judged again at launch: a rule that turned to deny since the approval wins.
        const atLaunch = yield* deps.policy.evaluate({ ...policyInput, provenance: provenanceOf(state) })
        if (atLaunch.verdict === "deny") {
          yield* notRun(
            state,
            actionStep(call, {
              args: prepared.args,
              policy_decision: "deny",
              policy_reason: `${atLaunch.rule}: ${atLaunch.reason}`,
              approval
            })
          )
          return end(
            "policy_denied",
            `I did not run ${tool.name} on ${prepared.target}: it was approved, but the policy rule "${atLaunch.rule}" now denies it (${atLaunch.reason}).`
          )
        }
      }
      // Write-ahead: the decision is durable in the audit log before anything changes, or nothing changes.
      const recorded = yield* Effect.either(writeAhead(deps, state, validated, decision, approvalRequestId))
      if (recorded._tag === "Left") {
        yield* notRun(
          state,
          actionStep(call, {
            args: prepared.args,
            policy_decision: decision.verdict,
            policy_reason: `${decision.rule}: ${decision.reason}`,
            approval,
            error: `not run: the audit log could not record the decision (${recorded.left.message})`
          })
        )
        return end(
          "policy_denied",
          `I did not run ${tool.name}: the audit log could not record the decision first (${recorded.left.message}), so nothing was changed.`
        )
      }
      const runnable: Runnable = { valid: validated, decision, approval }
      const executed = yield* recordingEdits(deps, state, prepared.target, approvalRequestId, execute(deps, runnable))
      yield* observe(deps, state, runnable, executed)
    }
    yield* flush
    return false
  }
)

interface Executed {
  readonly result: ToolResult
  readonly wallMs: number
  readonly finishedAt: number
}

const execute = (deps: TurnDeps, runnable: Runnable): Effect.Effect<Executed> =>
  Effect.flatMap(Clock.currentTimeMillis, (started) =>
    Effect.flatMap(
      deps.registry.execute(runnable.valid.prepared, runnable.valid.tool),
      (result) =>
        Effect.map(
          Clock.currentTimeMillis,
          (finished) => ({ result, wallMs: finished - started, finishedAt: finished })
        )
    )).pipe(
      Effect.tap(({ result }) => Effect.annotateCurrentSpan("myclaw.tool.status", result.status)),
      Effect.withSpan("Turn.action", {
        attributes: {
          ...actionAttributes(actionStep(runnable.valid.call, {
            policy_decision: runnable.decision.verdict,
            approval: runnable.approval
          })),
          "myclaw.policy.rule": runnable.decision.rule
        }
      })
    )

const writeAhead = (
  deps: TurnDeps,
  state: TurnState,
  valid: Valid,
  decision: PolicyDecision,
  approvalRequestId: string | null
) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    deps.audit.append({
      kind: "tool_decision",
      at: new Date(now).toISOString(),
      trace_id: state.traceId,
      session_id: state.input.sessionId,
      sender: state.input.channel,
      tool_name: valid.tool.name,
      target: valid.prepared.target,
      args_hash: argsHash(valid.prepared.args),
      decision: decision.verdict,
      rule: decision.rule,
      approval_request_id: approvalRequestId
    }))

const observe = (deps: TurnDeps, state: TurnState, runnable: Runnable, executed: Executed): Effect.Effect<void> => {
  const { call, prepared, tool } = runnable.valid
  const { result } = executed
  taint(state, tool, prepared.target, result)
  state.steps.push(actionStep(call, {
    args: prepared.args,
    policy_decision: runnable.decision.verdict,
    policy_reason: `${runnable.decision.rule}: ${runnable.decision.reason}`,
    approval: runnable.approval,
    exec_result: result,
    error: result.status === "failed" ? result.content : null,
    wall_ms: executed.wallMs
  }))
  state.messages.push({
    role: "tool",
    toolCallId: call.id,
    name: tool.name,
    content: deps.promptBuilder.renderToolResult(tool, result, executed.finishedAt),
    isError: result.status === "failed"
  })
  return recordSuspicion(deps, state, tool, result, executed.finishedAt)
}
