import { Context, Effect, Layer, Option } from "effect"
import { TraceStoreError } from "../../domain/Errors.js"
import type { ExecutionTrace } from "../../domain/ExecutionTrace.js"
import { listingOf, matchesFilter } from "../../domain/TraceListing.js"
import { TraceStore } from "../../services/TraceStore.js"
import { lastTurns } from "./Recent.js"

/** What an in-memory trace store holds, for tests to inspect. */
export class RecordedTraces extends Context.Tag("myclaw/RecordedTraces")<RecordedTraces, {
  readonly all: Effect.Effect<ReadonlyArray<ExecutionTrace>>
}>() {}

/** Traces kept in memory: for tests and for embedding without a workspace. Closed with its layer, like a file. */
export const TraceStoreMemory = Layer.scopedContext(
  Effect.gen(function*() {
    const traces: Array<ExecutionTrace> = []
    let closed = false
    yield* Effect.addFinalizer(() => Effect.sync(() => void (closed = true)))
    const store = TraceStore.of({
      persist: (trace) =>
        Effect.suspend(() =>
          closed
            ? Effect.fail(new TraceStoreError({ path: "<memory>", reason: "Io", message: "the trace store is closed" }))
            : Effect.sync(() => void traces.push(trace))
        ),
      get: (traceId) => Effect.sync(() => Option.fromNullable(traces.find((trace) => trace.trace_id === traceId))),
      list: (filter) =>
        Effect.sync(() => {
          const listed = traces.map((trace, index) => listingOf(trace, "<memory>", index, 0)).filter((listing) =>
            matchesFilter(listing, filter)
          )
          return filter.limit === undefined ? listed : lastTurns(listed, filter.limit)
        })
    })
    return Context.make(TraceStore, store).pipe(Context.add(RecordedTraces, { all: Effect.sync(() => traces.slice()) }))
  })
)
