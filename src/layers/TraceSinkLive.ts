import { Effect, Layer } from "effect"
import type { ExecutionTrace } from "../domain/ExecutionTrace.js"
import { traceRecord } from "../domain/TraceSummary.js"
import { AuditLog } from "../services/AuditLog.js"
import { Metrics } from "../services/Metrics.js"
import { TraceSink } from "../services/TraceSink.js"
import { TraceStore } from "../services/TraceStore.js"

/** The closed trace is persisted, then its summary appended to the audit log, then counted. */
export const TraceSinkLive = Layer.effect(
  TraceSink,
  Effect.gen(function*() {
    const store = yield* TraceStore
    const audit = yield* AuditLog
    const metrics = yield* Metrics
    const close = (trace: ExecutionTrace) =>
      store.persist(trace).pipe(
        Effect.zipRight(
          audit.append(traceRecord(trace)).pipe(
            Effect.catchAll((error) =>
              Effect.logError(`the trace ${trace.trace_id} is not in the audit log: ${error.message}`)
            )
          )
        ),
        Effect.ensuring(metrics.traceClosed(trace))
      )
    return TraceSink.of({ close })
  })
)
