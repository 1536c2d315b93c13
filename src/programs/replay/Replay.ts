import { Clock, Effect, Layer } from "effect"
import { compareTraces, type ReplayReport } from "../../domain/Divergence.js"
import type { ExecutionTrace } from "../../domain/ExecutionTrace.js"
import { makeReplayProbe } from "../../domain/ReplayProbe.js"
import { type Foundation, makeAppLayer } from "../../layers/AppLayer.js"
import { ApprovalRouterLive } from "../../layers/approvals/ApprovalRouterLive.js"
import { ApprovalsReplay } from "../../layers/approvals/ApprovalsReplay.js"
import { AuditLogMemory } from "../../layers/audit/AuditLogMemory.js"
import { BudgetMemory } from "../../layers/budget/BudgetMemory.js"
import { IdGeneratorReplay } from "../../layers/ids/IdGeneratorReplay.js"
import { LlmReplay } from "../../layers/llm/LlmReplay.js"
import { ToolRegistryReplay, type ToolReplayOptions } from "../../layers/tools/ToolRegistryReplay.js"
import { TraceStoreReplay } from "../../layers/traces/TraceStoreReplay.js"
import { AgentRuntime } from "../../services/AgentRuntime.js"
import type { ToolRegistry } from "../../services/ToolRegistry.js"

export interface ReplayOptions<E = never> extends ToolReplayOptions {
  /** The tool catalog the turn is replayed against (the application's, or another to compare with). */
  readonly tools: Layer.Layer<ToolRegistry, E, Foundation>
  /** The file the trace came from, for the report. */
  readonly file?: string | undefined
}

/** How tools are met by default: every result from the recording. */
export const defaultToolReplay: ToolReplayOptions = { sideEffects: "recorded", readOnly: "recorded" }

/**
 * Runs a recorded turn again through the real runtime (prompt builder, validation, policy, the gates, the turn
 * program) with the configuration and workspace of the context, the recorded model answers, owner answers, ids
 * and history, tool results from the recording (side-effecting tools are never executed), an audit log, budget
 * and trace store in memory; then compares the replayed trace with the recorded one.
 */
export const replayTrace = <E>(recorded: ExecutionTrace, options: ReplayOptions<E>) =>
  Effect.gen(function*() {
    const foundation = yield* Effect.context<Foundation>()
    const probe = makeReplayProbe()
    const kept: Array<ExecutionTrace> = []
    const layer = makeAppLayer({
      base: Layer.succeedContext(foundation),
      ids: IdGeneratorReplay(recorded.replay?.ids ?? []),
      audit: AuditLogMemory,
      budget: BudgetMemory,
      traceStore: TraceStoreReplay(recorded, kept),
      tools: ToolRegistryReplay(options.tools, recorded, probe, options),
      llm: LlmReplay(recorded, probe),
      approvals: Layer.provideMerge(ApprovalsReplay(recorded), ApprovalRouterLive)
    })
    const started = yield* Clock.currentTimeNanos
    const replayed = yield* Effect.scoped(
      Effect.flatMap(AgentRuntime, (runtime) =>
        runtime.handle({
          userMessage: recorded.user_message,
          sessionId: recorded.session_id,
          channel: recorded.channel
        })).pipe(Effect.provide(layer))
    )
    const finished = yield* Clock.currentTimeNanos
    const { divergence, notes } = compareTraces(recorded, replayed, probe)
    const report: ReplayReport = {
      trace_id: recorded.trace_id,
      file: options.file ?? null,
      user_message: recorded.user_message,
      identical: divergence === null,
      outcome: { recorded: recorded.outcome, replayed: replayed.outcome },
      divergence,
      notes,
      tools: { ...probe.tools },
      replay_ms: Number(finished - started) / 1e6
    }
    return { report, replayed }
  })
