import type { FileSystem } from "@effect/platform"
import { Cause, Effect, Exit } from "effect"
import { isoAt } from "../../domain/Time.js"
import type { ToolResult } from "../../domain/ToolCall.js"
import { AuditLog } from "../../services/AuditLog.js"
import type { PromptBuilder } from "../../services/PromptBuilder.js"
import type { ToolRegistry } from "../../services/ToolRegistry.js"
import type { Workspace } from "../../services/Workspace.js"
import { keepForUndo } from "../rules/UndoSnapshots.js"
import { type StepRuntime, withService } from "../Services.js"
import { actionStep, type Gate, type Run } from "./Gate.js"
import type { TurnProgress } from "./Progress.js"
import { suspicionOf, type Taint, taintOf } from "./Provenance.js"
import type { Observation } from "./TurnState.js"
import { recordingEdits } from "./WorkspaceEdits.js"

export interface Executed {
  readonly result: ToolResult
  readonly startedAt: number
  readonly finishedAt: number
}

/** The GenAI `execute_tool` attributes of a call, with the policy's decision and the approval. */
export const actionAttributes = (gate: Gate, status: string) => {
  const step = actionStep(gate)
  return {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": step.tool_name,
    "gen_ai.tool.call.id": step.tool_call_id,
    "myclaw.validation": step.validation,
    "myclaw.policy.decision": step.policy_decision ?? "none",
    "myclaw.approval": step.approval === null
      ? "none"
      : `${step.approval.granted ? "granted" : "denied"}:${step.approval.via}`,
    "myclaw.tool.status": status,
    ...(gate._tag === "Invalid" ? {} : { "myclaw.policy.rule": gate.decision.rule })
  }
}

/** What a turn reads once, when it opens, for every call it executes and observes. */
export interface StepEnvironment {
  readonly registry: ToolRegistry["Type"]
  readonly promptBuilder: PromptBuilder["Type"]
  readonly runtime: StepRuntime
  /** The channel's progress listener, when one watches the turn. */
  readonly listener: ((progress: TurnProgress) => Effect.Effect<void>) | undefined
}

/**
 * Runs a call that passed every gate, under the tool timeout; a failure is a `failed` result, never an error.
 * Written as one chain of effects (no generator; one clock for both times): it runs for every tool call. Made
 * where it runs: without a progress report first, its start is read as it is made.
 */
export const execute = (
  run: Run,
  traceId: string,
  environment: StepEnvironment
): Effect.Effect<Executed, never, ExecuteServices> => {
  const { listener } = environment
  // Timed from when the call starts: after the progress report, which may take a while.
  return listener === undefined
    ? executing(run, traceId, environment)
    : Effect.zipRight(
      listener({ _tag: "Tool", name: run.tool.name }),
      Effect.suspend(() => executing(run, traceId, environment))
    )
}

/** The call, timed from now. */
const executing = (
  run: Run,
  traceId: string,
  { registry, runtime: { clock, traced } }: StepEnvironment
): Effect.Effect<Executed, never, ExecuteServices> => {
  const startedAt = clock.unsafeCurrentTimeMillis()
  const timed = Effect.map(
    registry.execute(run.prepared, run.tool),
    (result): Executed => ({ result, startedAt, finishedAt: clock.unsafeCurrentTimeMillis() })
  )
  const edit = { traceId, target: run.prepared.target, approvalRequestId: run.approvalRequestId }
  const ran = run.tool.hasSideEffects ? recordingEdits(edit, timed) : timed
  const spanned = traced
    ? Effect.withSpan(
      Effect.tap(ran, ({ result }) => Effect.annotateCurrentSpan({ "myclaw.tool.status": result.status })),
      "Turn.action",
      { attributes: actionAttributes(run, "not_run") }
    )
    : ran
  // What a workspace file held before a write: what `/undo` puts back.
  return run.tool.hasSideEffects && run.tool.targetKind === "path" && run.prepared.target !== ""
    ? Effect.zipRight(keepForUndo(traceId, run.prepared.target), spanned)
    : spanned
}

/** The services `execute` uses. */
type ExecuteServices = Workspace | AuditLog | FileSystem.FileSystem

const interrupted: ToolResult = {
  status: "failed",
  content: "interrupted: the turn was stopped while the tool ran; it may have had some of its effects"
}

/**
 * What an execution adds to the turn: its ActionStep with the whole result, the result as the model reads it
 * (truncated, untrusted content wrapped), the taint it brings and any suspected injection (also audited). An
 * execution cut short by an interruption is recorded as such: what ran is never erased. Made where it runs (the
 * time of an interrupted call is read as it is made).
 */
export const observe = (
  run: Run,
  exit: Exit.Exit<Executed>,
  context: {
    readonly traceId: string
    readonly sessionId: string
    readonly channel: string
    readonly userMessage: string
  },
  { promptBuilder: builder, runtime: { clock } }: StepEnvironment
) => {
  const now = clock.unsafeCurrentTimeMillis()
  const executed: Executed = Exit.isSuccess(exit)
    ? exit.value
    : {
      result: Cause.isInterruptedOnly(exit.cause) ? interrupted : failure(exit.cause),
      startedAt: now,
      finishedAt: now
    }
  const { result } = executed
  const suspicion = suspicionOf(run.tool, result)
  const recorded = (found: NonNullable<typeof suspicion>) =>
    withService(AuditLog, (audit) =>
      audit.append({
        kind: "injection_suspected",
        at: isoAt(executed.finishedAt),
        trace_id: context.traceId,
        session_id: context.sessionId,
        sender: context.channel,
        source: found.source,
        pattern: found.pattern,
        excerpt: found.excerpt
      }).pipe(Effect.catchAll((error) => Effect.logError(`injection_suspected not recorded: ${error.message}`))))
  const rendered = builder.renderToolResult(run.tool, result, executed.finishedAt)
  const observation = (content: string, taint: Taint): Observation => ({
    step: actionStep(run, result, executed.finishedAt - executed.startedAt),
    message: {
      role: "tool",
      toolCallId: run.call.id,
      name: run.tool.name,
      content,
      isError: result.status === "failed"
    },
    invalid: false,
    ...taint,
    suspicion: suspicion === undefined ? undefined : { source: suspicion.source, pattern: suspicion.pattern }
  })
  // A local tool's result asks the policy nothing: one map, not an effect per step to say so. Otherwise a
  // flatMap and a map, not `Effect.zipWith`: that one goes through `Effect.all`, several times the operations.
  const taint = taintOf(context.userMessage, run.tool, result)
  const observed = taint === undefined
    ? Effect.map(rendered, (content) => observation(content, {}))
    : Effect.flatMap(rendered, (content) => Effect.map(taint, (found) => observation(content, found)))
  return suspicion === undefined ? observed : Effect.zipRight(recorded(suspicion), observed)
}

const failure = (cause: Cause.Cause<unknown>): ToolResult => ({
  status: "failed",
  content: `the tool crashed: ${Cause.pretty(cause)}`
})
