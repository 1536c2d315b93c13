import { Effect, type Tracer } from "effect"

/** The tracer every fiber starts with: its spans are kept by nobody (no exporter reads them). */
const defaultTracer = Effect.runSync(Effect.tracer)

/** Whether `tracer` exports spans (OTLP, a test's): any tracer but the one every fiber starts with. */
export const isExporting = (tracer: Tracer.Tracer): boolean => tracer !== defaultTracer

/**
 * `Effect.withSpan` on a hot path: the span (and its attributes, built by `options`) is made only when a tracer
 * that exports is installed. Under the default tracer nobody reads spans, and making them (a stack capture, the
 * span, a copy of the context) is a large share of a step's cost.
 */
export const withSpanWhenTraced =
  (name: string, options?: () => Tracer.SpanOptions) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.tracerWith((tracer) =>
      isExporting(tracer) ? Effect.withSpan(self, name, options === undefined ? {} : options()) : self
    )
