import { Context, Effect, Layer } from "effect"
import type { ExecutionTrace } from "../../domain/ExecutionTrace.js"
import { pastTurnOf, TraceStore } from "../../services/TraceStore.js"

/** What an in-memory trace store holds, for tests to inspect. */
export class RecordedTraces extends Context.Tag("myclaw/RecordedTraces")<RecordedTraces, {
  readonly all: Effect.Effect<ReadonlyArray<ExecutionTrace>>
}>() {}

/** Traces kept in memory: for tests and for embedding without a workspace. */
export const TraceStoreMemory = Layer.effectContext(
  Effect.gen(function*() {
    const traces: Array<ExecutionTrace> = []
    const store = TraceStore.of({
      persist: (trace) => Effect.sync(() => void traces.push(trace)),
      recentTurns: (sessionId, limit) =>
        Effect.sync(() =>
          traces
            .filter((trace) => trace.session_id === sessionId)
            .slice(-limit)
            .map(pastTurnOf)
        )
    })
    return Context.make(TraceStore, store).pipe(Context.add(RecordedTraces, { all: Effect.sync(() => traces.slice()) }))
  })
)
