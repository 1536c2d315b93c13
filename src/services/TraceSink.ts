import { Context } from "effect"
import type { Effect } from "effect"
import type { TraceStoreError } from "../domain/Errors.js"
import type { ExecutionTrace } from "../domain/ExecutionTrace.js"

/**
 * Where a closed trace goes, once: the trace store keeps it whole, the audit log signs its summary, the metrics
 * count it, in that order. Everything else about a turn (audit, replay, evaluation) derives from it.
 */
export class TraceSink extends Context.Tag("myclaw/TraceSink")<TraceSink, {
  /** Fails only when the trace could not be kept; an audit or metrics failure is logged, never hides the trace. */
  readonly close: (trace: ExecutionTrace) => Effect.Effect<void, TraceStoreError>
}>() {}
