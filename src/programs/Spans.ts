import { Effect, type Tracer } from "effect"

/** The tracer every fiber starts with: its spans are kept by nobody (no exporter reads them). */
export const defaultTracer = Effect.runSync(Effect.tracer)

/** True when a tracer that exports spans (OTLP, a test's) is installed around the current fiber. */
export const tracing: Effect.Effect<boolean> = Effect.map(Effect.tracer, (tracer) => tracer !== defaultTracer)

/**
 * `Effect.withSpan` on a hot path: the span (and its attributes, built by `options`) is made only when a tracer
 * that exports is installed. Under the default tracer nobody reads spans, and making them (a stack capture, the
 * span, a copy of the context) is a large share of a step's cost.
 */
export const withSpanWhenTraced =
  (name: string, options?: () => Tracer.SpanOptions) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(
      Effect.tracer,
      (tracer) => tracer === defaultTracer ? self : Effect.withSpan(self, name, options === undefined ? {} : options())
    )

/** `Effect.annotateCurrentSpan` on a hot path: the attributes are built only when a tracer exports them. */
export const annotateWhenTraced = (attributes: () => Record<string, unknown>): Effect.Effect<void> =>
  Effect.flatMap(
    Effect.tracer,
    (tracer) => tracer === defaultTracer ? Effect.void : Effect.annotateCurrentSpan(attributes())
  )
