import { Effect, Tracer } from "effect"

/**
 * A tracer that exports (any tracer but the default one: spans are then made, see programs/Spans.ts) and keeps
 * every span it makes, for their names and attributes.
 */
export const recordingTracer = Effect.map(Effect.tracer, (base) => {
  const spans: Array<Tracer.Span> = []
  const tracer = Tracer.make({
    span: (...args) => {
      const span = base.span(...args)
      spans.push(span)
      return span
    },
    context: base.context
  })
  return { tracer, spans }
})
