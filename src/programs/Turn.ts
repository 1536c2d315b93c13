import { Cause, Clock, Effect, Exit, Schema } from "effect"
import { BudgetExceeded, LlmError } from "../domain/Errors.js"
import type { Outcome } from "../domain/ExecutionTrace.js"
import type { TurnInput } from "../services/AgentRuntime.js"
import { Approvals } from "../services/Approvals.js"
import { AuditLog } from "../services/AuditLog.js"
import { Budget } from "../services/Budget.js"
import { Llm } from "../services/Llm.js"
import { MyclawConfig } from "../services/MyclawConfig.js"
import { Policy } from "../services/Policy.js"
import { PromptBuilder } from "../services/PromptBuilder.js"
import { ToolRegistry } from "../services/ToolRegistry.js"
import { TraceStore } from "../services/TraceStore.js"
import { Workspace } from "../services/Workspace.js"
import { runActions } from "./Actions.js"
import { traceRecord } from "./AuditTrail.js"
import { budgetHitMessage, llmFailureMessage, softCapNotice, stepsExhaustedMessage } from "./Messages.js"
import { think } from "./Thought.js"
import { closeTrace, type TurnState } from "./TurnState.js"

const encodeThoughtError = Schema.encodeSync(Schema.Union(LlmError, BudgetExceeded))

/**
 * One turn of the ReAct loop (DESIGN section 2): Thought -> validate -> policy -> approval -> execute ->
 * observe, until an answer or one of the other five outcomes. Whatever happens, interruption included,
 * the trace is closed and persisted exactly once.
 */
export const runTurn = Effect.fn("Turn.run")(function*(input: TurnInput) {
  const { config } = yield* MyclawConfig
  const llm = yield* Llm
  const budget = yield* Budget
  const traceStore = yield* TraceStore
  const promptBuilder = yield* PromptBuilder
  const deps = {
    llm,
    budget,
    registry: yield* ToolRegistry,
    policy: yield* Policy,
    approvals: yield* Approvals,
    promptBuilder,
    audit: yield* AuditLog,
    workspace: yield* Workspace,
    config
  }
  const state: TurnState = {
    input,
    traceId: crypto.randomUUID(),
    startedAt: yield* Clock.currentTimeMillis,
    steps: [],
    messages: [],
    system: [],
    costUsd: 0,
    invalidStreak: 0,
    forceFrontier: false,
    untrustedSources: [],
    untrustedHosts: new Set(),
    outcome: undefined,
    finalResponse: null,
    metadata: {}
  }
  yield* Effect.annotateCurrentSpan({ trace_id: state.traceId, session_id: input.sessionId })

  const end = (outcome: Outcome, response: string | null): true => {
    state.outcome = outcome
    state.finalResponse = response
    return true
  }

  const loop = Effect.gen(function*() {
    const prompt = yield* promptBuilder.build({ sessionId: input.sessionId, userMessage: input.userMessage })
    state.system = prompt.system
    state.messages = prompt.messages.slice()
    for (let step = 0; step < config.maxSteps; step++) {
      const status = yield* budget.status
      if (status.level === "hard") return end("budget_hit", budgetHitMessage(status))
      const tier = status.level === "soft" && !state.forceFrontier ? "local-fast" : "frontier"
      const thought = yield* think(deps, state, tier)
      if (thought._tag === "Failed") {
        state.metadata.error = encodeThoughtError(thought.error)
        if (thought.error._tag === "BudgetExceeded") return end("budget_hit", budgetHitMessage(yield* budget.status))
        return end("timeout_steps", llmFailureMessage(thought.error))
      }
      const response = thought.response
      if (response.toolCalls.length === 0) {
        const after = yield* budget.status
        if (!after.softNoticePending) return end("success", response.text)
        yield* budget.softNoticeGiven
        return end("success", `${response.text}\n\n${softCapNotice(after)}`)
      }
      state.messages.push({ role: "assistant", content: response.text, toolCalls: response.toolCalls })
      const stop = yield* runActions(deps, state, response.toolCalls, end)
      if (stop) return true
    }
    return end("timeout_steps", stepsExhaustedMessage(config.maxSteps))
  })

  return yield* Effect.uninterruptibleMask((restore) =>
    restore(loop).pipe(
      Effect.exit,
      Effect.flatMap((exit) => {
        if (state.outcome === undefined) {
          if (Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)) {
            end("user_aborted", "Stopped: the turn was interrupted before it finished.")
          } else {
            state.metadata.error = Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "the loop ended without outcome"
            end("timeout_steps", "I could not finish this request because of an internal error; it is in the trace.")
          }
        }
        return Effect.flatMap(closeTrace(state), (trace) =>
          traceStore.persist(trace).pipe(
            Effect.zipRight(
              deps.audit.append(traceRecord(trace)).pipe(
                Effect.catchAll((error) =>
                  Effect.logError(`the trace ${trace.trace_id} is not in the audit log: ${error.message}`)
                )
              )
            ),
            Effect.as(trace)
          ))
      })
    )
  ).pipe(Effect.annotateLogs({ trace_id: state.traceId, session_id: input.sessionId }))
})
