import { Clock, Context, Effect, type Fiber } from "effect"
import { isExporting } from "./Spans.js"

/**
 * `Effect.flatMap(tag, f)` in one runtime operation instead of three: a tag used as an effect is looked up by an
 * effect of its own, which then has to be continued. For the services a turn reads on every step. The service
 * stays in the requirements, so a layer that does not provide it is still a type error; missing at run time
 * (never, once the types hold), it is a defect, as the tag's own lookup would be.
 */
export const withService = <I, S, A, E, R>(
  tag: Context.Tag<I, S>,
  f: (service: S) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R | I> => Effect.withFiberRuntime((fiber) => f(Context.unsafeGet(fiber.currentContext, tag)))

/**
 * The current context, with the services `R` in it: one runtime operation for several services (`yield*` of
 * each tag costs three each).
 */
export const services = <R>(): Effect.Effect<Context.Context<R>, never, R> =>
  Effect.withFiberRuntime((fiber) => Effect.succeed(fiber.currentContext as Context.Context<R>))

/** What a step's program reads from its fiber besides a service: the clock, and whether spans are exported. */
export interface StepRuntime {
  readonly clock: Clock.Clock
  /** A tracer that exports spans (OTLP, a test's) is installed: make the spans and their attributes. */
  readonly traced: boolean
}

const runtimeOf = (fiber: Fiber.RuntimeFiber<unknown, unknown>): StepRuntime => ({
  clock: Context.get(fiber.currentDefaultServices, Clock.Clock),
  traced: isExporting(fiber.currentTracer)
})

/**
 * `withService`, with the fiber's clock and whether spans are exported, all read in the same runtime operation
 * (a clock and a tracer lookup are one operation each otherwise): for the programs that run on every step.
 */
export const withStepService = <I, S, A, E, R>(
  tag: Context.Tag<I, S>,
  f: (service: S, runtime: StepRuntime) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R | I> =>
  Effect.withFiberRuntime((fiber) => f(Context.unsafeGet(fiber.currentContext, tag), runtimeOf(fiber)))

/** `services<R>()` with the fiber's clock and whether its tracer exports, in one operation: a turn's start. */
export const servicesAndRuntime = <R>(): Effect.Effect<
  { readonly context: Context.Context<R>; readonly runtime: StepRuntime },
  never,
  R
> =>
  Effect.withFiberRuntime((fiber) =>
    Effect.succeed({ context: fiber.currentContext as Context.Context<R>, runtime: runtimeOf(fiber) })
  )
