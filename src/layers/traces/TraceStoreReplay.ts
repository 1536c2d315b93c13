import { Effect, Layer, Option } from "effect"
import type { ExecutionTrace } from "../../domain/ExecutionTrace.js"
import { TraceStore } from "../../services/TraceStore.js"

/**
 * The trace store of a replay: the recorded session history is what the prompt's history block gets again, and
 * the replayed trace is kept in memory only (a replay never adds to the owner's traces).
 */
export const TraceStoreReplay = (recorded: ExecutionTrace, kept: Array<ExecutionTrace>) =>
  Layer.succeed(
    TraceStore,
    TraceStore.of({
      persist: (trace) => Effect.sync(() => void kept.push(trace)),
      recentTurns: (sessionId, limit) =>
        Effect.succeed(
          sessionId === recorded.session_id
            ? (recorded.replay?.history ?? []).slice(-limit).map((turn) => ({
              userMessage: turn.user_message,
              finalResponse: turn.final_response
            }))
            : []
        ),
      get: (traceId) => Effect.succeed(Option.fromNullable(kept.find((trace) => trace.trace_id === traceId))),
      list: () => Effect.succeed([])
    })
  )
