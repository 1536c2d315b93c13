import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Tracer } from "effect"
import { TestLayer } from "../../src/layers/Test.js"
import { AgentRuntime } from "../../src/services/AgentRuntime.js"
import { Sessions } from "../../src/services/Sessions.js"

/** A tracer that keeps every span it makes (exporting tracers are what turn the turn's spans on). */
const recordingTracer = () => {
  const spans: Array<Tracer.Span> = []
  const native = Tracer.make({
    span: (...args) => {
      const span = Effect.runSync(Effect.tracer).span(...args)
      spans.push(span)
      return span
    },
    context: (f) => f()
  })
  return { spans, native }
}

const parentName = (span: Tracer.Span, all: ReadonlyArray<Tracer.Span>): string | undefined =>
  Option.match(span.parent, {
    onNone: () => undefined,
    onSome: (parent) => all.find((s) => s.spanId === parent.spanId)?.name
  })

const input = { userMessage: "hello", sessionId: "s-1", channel: "cli:me" }

describe("AgentRuntimeLive", () => {
  it.scoped("a caller that has the turn's services runs the turn in its own context: its span is the parent", () =>
    Effect.gen(function*() {
      const { native, spans } = recordingTracer()
      const trace = yield* Effect.gen(function*() {
        const agent = yield* AgentRuntime
        return yield* agent.handle(input).pipe(Effect.withSpan("caller"))
      }).pipe(Effect.withTracer(native), Effect.provide(TestLayer({ script: [{ text: "hi" }] })))
      assert.strictEqual(trace.outcome, "success")
      const run = spans.find((span) => span.name === "Turn.run")
      assert.isDefined(run)
      assert.strictEqual(parentName(run!, spans), "caller")
    }))

  it.scoped("a caller without them (another runtime's fiber) gets them from the layer, and its span is kept", () =>
    Effect.gen(function*() {
      const { native, spans } = recordingTracer()
      const context = yield* Layer.build(TestLayer({ script: [{ text: "hi" }] }))
      const agent = Context.get(context, AgentRuntime)
      // Only the runtime service crosses over: the caller's context holds none of the turn's services.
      const trace = yield* Effect.promise(() =>
        Effect.runPromise(agent.handle(input).pipe(Effect.withSpan("caller"), Effect.withTracer(native)))
      )
      assert.strictEqual(trace.outcome, "success")
      assert.strictEqual(parentName(spans.find((span) => span.name === "Turn.run")!, spans), "caller")
      // The turn used the layer's own services: its session store holds the turn.
      const history = yield* Context.get(context, Sessions).history("s-1", "cli:me")
      assert.deepStrictEqual(history.turns.map((turn) => turn.user_message), ["hello"])
    }))
})
