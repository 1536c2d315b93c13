import { Clock, DateTime, Effect } from "effect"
import type { AppConfig } from "../domain/AppConfig.js"
import type { ExecutionTrace, Outcome, TraceStep } from "../domain/ExecutionTrace.js"
import type { Message, SystemBlock } from "../domain/LlmTypes.js"
import type { TurnInput } from "../services/AgentRuntime.js"
import type { Approvals } from "../services/Approvals.js"
import type { AuditLog } from "../services/AuditLog.js"
import type { Budget } from "../services/Budget.js"
import type { Llm } from "../services/Llm.js"
import type { Policy } from "../services/Policy.js"
import type { PromptBuilder } from "../services/PromptBuilder.js"
import type { ToolRegistry } from "../services/ToolRegistry.js"
import type { Workspace } from "../services/Workspace.js"

/** The services a turn uses, yielded once per turn. */
export interface TurnDeps {
  readonly llm: Llm["Type"]
  readonly budget: Budget["Type"]
  readonly registry: ToolRegistry["Type"]
  readonly policy: Policy["Type"]
  readonly approvals: Approvals["Type"]
  readonly promptBuilder: PromptBuilder["Type"]
  readonly audit: AuditLog["Type"]
  readonly workspace: Workspace["Type"]
  readonly config: AppConfig
}

/** The trace under construction; owned by the turn's fiber, closed once by `closeTrace`. */
export interface TurnState {
  readonly input: TurnInput
  readonly traceId: string
  readonly startedAt: number
  readonly steps: Array<TraceStep>
  messages: Array<Message>
  system: ReadonlyArray<SystemBlock>
  costUsd: number
  /** Consecutive invalid tool calls; two end the turn as tool_hallucination. */
  invalidStreak: number
  /** Where untrusted content in this turn came from, and the hosts it named (the taint rule). */
  readonly untrustedSources: Array<string>
  readonly untrustedHosts: Set<string>
  /** Set once the policy forced `frontier` for a sensitive call: the following Thoughts ignore the soft cap. */
  forceFrontier: boolean
  outcome: Outcome | undefined
  finalResponse: string | null
  readonly metadata: Record<string, unknown>
}

/** Ends the turn with an outcome; returns true so that callers can `return end(...)` to stop the loop. */
export type End = (outcome: Outcome, response: string | null) => true

export const closeTrace = (state: TurnState): Effect.Effect<ExecutionTrace> =>
  Effect.map(Clock.currentTimeMillis, (now) => ({
    trace_id: state.traceId,
    session_id: state.input.sessionId,
    channel: state.input.channel,
    started_at: DateTime.unsafeMake(state.startedAt),
    finished_at: DateTime.unsafeMake(now),
    user_message: state.input.userMessage,
    steps: state.steps,
    final_response: state.finalResponse,
    cost_usd: state.costUsd,
    wall_time_ms: now - state.startedAt,
    outcome: state.outcome ?? "timeout_steps",
    metadata: state.metadata
  }))
