import { Context, Effect, Either, Layer } from "effect"
import { messageOf } from "../../domain/Errors.js"
import type { ExecutionTrace } from "../../domain/ExecutionTrace.js"
import { compareLive, type LiveReport } from "../../domain/LiveComparison.js"
import { quotedOf } from "../../domain/Quoted.js"
import type { TraceFileError } from "../../domain/TraceFile.js"
import { describeTraceFileError } from "../../domain/TraceFile.js"
import { type Foundation, makeAppLayer } from "../../layers/AppLayer.js"
import { ApprovalRouterLive } from "../../layers/approvals/ApprovalRouterLive.js"
import { ApprovalsReplay } from "../../layers/approvals/ApprovalsReplay.js"
import { AuditLogMemory } from "../../layers/audit/AuditLogMemory.js"
import { BudgetLive } from "../../layers/budget/BudgetLive.js"
import * as Compose from "../../layers/Compose.js"
import { IdGeneratorLive } from "../../layers/ids/IdGeneratorLive.js"
import { PlanCacheNone } from "../../layers/plans/PlanCacheSqlite.js"
import { SessionsReplay } from "../../layers/sessions/SessionsReplay.js"
import { ToolRegistryReplay } from "../../layers/tools/ToolRegistryReplay.js"
import { TraceStoreReplay } from "../../layers/traces/TraceStoreReplay.js"
import { AgentRuntime } from "../../services/AgentRuntime.js"
import type { Budget } from "../../services/Budget.js"
import type { Llm } from "../../services/Llm.js"
import { CurrentReplay, makeReplaySession, type ToolReplayOptions } from "../../services/Replaying.js"
import type { Secrets } from "../../services/Secrets.js"
import type { ToolRegistry } from "../../services/ToolRegistry.js"

/** New calls of a live turn: a dry run for side effects, a real run for reads; recorded calls get their result. */
const liveTools: ToolReplayOptions = { sideEffects: "recorded", readOnly: "recorded", unrecorded: "fallback" }

export type LiveRow =
  | { readonly file: string; readonly report: LiveReport; readonly error: null }
  | { readonly file: string; readonly report: null; readonly error: string }

/**
 * Each recorded user message sent again through the runtime with a live model (the configured provider set, or
 * another), its history and the owner's recorded answers given again; side-effecting tools are never executed
 * (their recorded result, or a dry run for a call the recording does not have), and each model call is reserved
 * and settled in the day's budget like any other. Reports per turn what changed: outcome, tool calls, tokens,
 * cost, time.
 */
export const liveEval = <EL, ET>(
  traces: ReadonlyArray<{ readonly file: string; readonly trace: Either.Either<ExecutionTrace, TraceFileError> }>,
  parts: {
    readonly llm: Layer.Layer<Llm, EL, Foundation | Budget>
    readonly tools: Layer.Layer<ToolRegistry, ET, Foundation | Secrets>
  },
  concurrency = 4
) =>
  Effect.scoped(Effect.gen(function*() {
    const foundation = yield* Effect.context<Foundation>()
    const graph = makeAppLayer({
      base: Layer.succeedContext(foundation),
      ids: IdGeneratorLive,
      audit: AuditLogMemory,
      budget: BudgetLive,
      traceStore: TraceStoreReplay,
      sessions: SessionsReplay,
      tools: ToolRegistryReplay(parts.tools),
      llm: parts.llm,
      approvals: Compose.provideMerge(ApprovalsReplay, ApprovalRouterLive),
      plans: PlanCacheNone
    })
    const runtime = Context.get(yield* Layer.build(graph), AgentRuntime)
    return yield* Effect.forEach(traces, ({ file, trace }) =>
      Either.match(trace, {
        onLeft: (error): Effect.Effect<LiveRow> =>
          Effect.succeed({ file, report: null, error: describeTraceFileError(error) }),
        onRight: (recorded) =>
          Effect.locally(
            runtime.handle({
              userMessage: recorded.user_message,
              sessionId: recorded.session_id,
              channel: recorded.channel,
              quoted: quotedOf(recorded.metadata)
            }),
            CurrentReplay,
            makeReplaySession(recorded, liveTools)
          ).pipe(
            Effect.map((live): LiveRow => ({ file, report: compareLive(recorded, live, file), error: null })),
            Effect.catchAll((error) =>
              Effect.succeed<LiveRow>({ file, report: null, error: `live run failed: ${error.message}` })
            ),
            Effect.catchAllDefect((defect) =>
              Effect.succeed<LiveRow>({ file, report: null, error: `live run crashed: ${messageOf(defect)}` })
            )
          )
      }), { concurrency })
  }))
