import { Clock, Context, Effect, Layer } from "effect"
import { compareTraces, type ReplayReport } from "../../domain/Divergence.js"
import type { ExecutionTrace } from "../../domain/ExecutionTrace.js"
import { quotedOf } from "../../domain/Quoted.js"
import { type Foundation, makeAppLayer } from "../../layers/AppLayer.js"
import { ApprovalRouterLive } from "../../layers/approvals/ApprovalRouterLive.js"
import { ApprovalsReplay } from "../../layers/approvals/ApprovalsReplay.js"
import { AuditLogMemory } from "../../layers/audit/AuditLogMemory.js"
import { BudgetReplay } from "../../layers/budget/BudgetReplay.js"
import * as Compose from "../../layers/Compose.js"
import { IdGeneratorReplay } from "../../layers/ids/IdGeneratorReplay.js"
import { LlmReplay } from "../../layers/llm/LlmReplay.js"
import { PlanCacheNone } from "../../layers/plans/PlanCacheSqlite.js"
import { SessionsReplay } from "../../layers/sessions/SessionsReplay.js"
import { ToolRegistryReplay } from "../../layers/tools/ToolRegistryReplay.js"
import { TraceStoreReplay } from "../../layers/traces/TraceStoreReplay.js"
import { AgentRuntime } from "../../services/AgentRuntime.js"
import { CurrentReplay, makeReplaySession, type ToolReplayOptions } from "../../services/Replaying.js"
import type { Secrets } from "../../services/Secrets.js"
import type { ToolRegistry } from "../../services/ToolRegistry.js"

export interface ReplayOptions<E = never> extends ToolReplayOptions {
  /** The tool catalog the turns are replayed against (the application's, or another to compare with). */
  readonly tools: Layer.Layer<ToolRegistry, E, Foundation | Secrets>
}

/** How tools are met by default: every result from the recording. */
export const defaultToolReplay: ToolReplayOptions = { sideEffects: "recorded", readOnly: "recorded" }

/**
 * The replay graph, built once: the real runtime (prompt builder, validation, policy, the gates, the turn
 * program) over the configuration and workspace of the context, with the replay layers (model, owner's answers,
 * ids, history, tool results) serving each turn from its own recording, and an audit log, budget and trace
 * store in memory. The function it returns replays one recorded turn and compares the result with it; any
 * number may run side by side.
 */
export const makeReplayer = <E>(tools: Layer.Layer<ToolRegistry, E, Foundation | Secrets>) =>
  Effect.gen(function*() {
    const foundation = yield* Effect.context<Foundation>()
    const graph = makeAppLayer({
      base: Layer.succeedContext(foundation),
      ids: IdGeneratorReplay,
      audit: AuditLogMemory,
      budget: BudgetReplay,
      traceStore: TraceStoreReplay,
      sessions: SessionsReplay,
      tools: ToolRegistryReplay(tools),
      llm: LlmReplay,
      approvals: Compose.provideMerge(ApprovalsReplay, ApprovalRouterLive),
      plans: PlanCacheNone
    })
    const runtime = Context.get(yield* Layer.build(graph), AgentRuntime)
    return (recorded: ExecutionTrace, options: ToolReplayOptions = defaultToolReplay, file?: string) =>
      Effect.gen(function*() {
        const session = makeReplaySession(recorded, options)
        const started = yield* Clock.currentTimeNanos
        const replayed = yield* Effect.locally(
          runtime.handle({
            userMessage: recorded.user_message,
            sessionId: recorded.session_id,
            channel: recorded.channel,
            quoted: quotedOf(recorded.metadata)
          }),
          CurrentReplay,
          session
        )
        const finished = yield* Clock.currentTimeNanos
        const { divergence, notes } = compareTraces(recorded, replayed, session.probe)
        const report: ReplayReport = {
          trace_id: recorded.trace_id,
          file: file ?? null,
          user_message: recorded.user_message,
          identical: divergence === null,
          outcome: { recorded: recorded.outcome, replayed: replayed.outcome },
          divergence,
          notes,
          tools: { ...session.probe.tools },
          replay_ms: Number(finished - started) / 1e6
        }
        return { report, replayed }
      })
  })

/** One recorded turn replayed in a graph of its own (see makeReplayer). */
export const replayTrace = <E>(recorded: ExecutionTrace, options: ReplayOptions<E> & { readonly file?: string }) =>
  Effect.scoped(Effect.flatMap(makeReplayer(options.tools), (replay) => replay(recorded, options, options.file)))
