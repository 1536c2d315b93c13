import { Context, Effect, Layer, Ref } from "effect"
import type { ExecutionTrace } from "../domain/ExecutionTrace.js"
import { TraceStore } from "../services/TraceStore.js"

/** What an in-memory trace store holds, for tests to inspect. */
export class RecordedTraces extends Context.Tag("myclaw/RecordedTraces")<RecordedTraces, {
  readonly all: Effect.Effect<ReadonlyArray<ExecutionTrace>>
}>() {}

/** Traces kept in memory: for tests and for embedding without a workspace. */
export const TraceStoreMemory = Layer.effectContext(
  Effect.gen(function*() {
    const traces = yield* Ref.make<ReadonlyArray<ExecutionTrace>>([])
    const store = TraceStore.of({
      persist: (trace) => Ref.update(traces, (all) => [...all, trace]),
      recentTurns: (sessionId, limit) =>
        Effect.map(Ref.get(traces), (all) =>
          all
            .filter((trace) => trace.session_id === sessionId)
            .slice(-limit)
            .map((trace) => ({ userMessage: trace.user_message, finalResponse: trace.final_response })))
    })
    return Context.make(TraceStore, store).pipe(Context.add(RecordedTraces, { all: Ref.get(traces) }))
  })
)
