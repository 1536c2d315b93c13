import { Effect, type Tracer } from "effect"

/** The tracer every fiber starts with: its spans are kept by nobody (no exporter reads them). */
const defaultTracer = Effect.runSync(Effect.tracer)

/** Whether `tracer` exports spans (OTLP, a test's): any tracer but the one every fiber starts with. */
export const isExporting = (tracer: Tracer.Tracer): boolean => tracer !== defaultTracer

/**
 * `traced()` when a tracer that exports spans (OTLP, a test's) is installed around the current fiber, else
 * `untraced`, with one lookup: a program that makes a span and annotates it checks once.
 */
export const whenTraced = <A, E, R, A2, E2, R2>(
  untraced: Effect.Effect<A, E, R>,
  traced: () => Effect.Effect<A2, E2, R2>
): Effect.Effect<A | A2, E | E2, R | R2> =>
  Effect.tracerWith((tracer): Effect.Effect<A | A2, E | E2, R | R2> => isExporting(tracer) ? traced() : untraced)

/** True when a tracer that exports spans (OTLP, a test's) is installed around the current fiber. */
export const tracing: Effect.Effect<boolean> = whenTraced(Effect.succeed(false), () => Effect.succeed(true))

/**
 * `Effect.withSpan` on a hot path: the span (and its attributes, built by `options`) is made only when a tracer
 * that exports is installed. Under the default tracer nobody reads spans, and making them (a stack capture, the
 * span, a copy of the context) is a large share of a step's cost.
 */
export const withSpanWhenTraced =
  (name: string, options?: () => Tracer.SpanOptions) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    whenTraced(self, () => Effect.withSpan(self, name, options === undefined ? {} : options()))
