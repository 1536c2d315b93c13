import { assert, describe, it } from "@effect/vitest"
import { Cause, Context, Effect, Exit, TestClock, Tracer } from "effect"
import { services, servicesAndRuntime, withService, withStepService } from "../../src/programs/Services.js"

class Greeter extends Context.Tag("test/Greeter")<Greeter, { readonly greet: (name: string) => string }>() {}
class Counter extends Context.Tag("test/Counter")<Counter, { readonly next: () => number }>() {}

const english = Greeter.of({ greet: (name) => `hello ${name}` })
const italian = Greeter.of({ greet: (name) => `ciao ${name}` })

describe("withService and services", () => {
  it.effect("withService reads the service the fiber has, the innermost one where it is provided twice", () =>
    Effect.gen(function*() {
      const greeting = withService(Greeter, (greeter) => Effect.succeed(greeter.greet("Ada")))
      assert.strictEqual(yield* Effect.provideService(greeting, Greeter, english), "hello Ada")
      const nested = Effect.provideService(Effect.provideService(greeting, Greeter, italian), Greeter, english)
      assert.strictEqual(yield* nested, "ciao Ada")
    }))

  it.effect("services gives one context holding every service asked for", () =>
    Effect.gen(function*() {
      let n = 0
      const both = Effect.map(
        services<Greeter | Counter>(),
        (context) => `${Context.get(context, Greeter).greet("Bo")} ${Context.get(context, Counter).next()}`
      )
      const provided = both.pipe(
        Effect.provideService(Greeter, english),
        Effect.provideService(Counter, Counter.of({ next: () => ++n }))
      )
      assert.strictEqual(yield* provided, "hello Bo 1")
    }))

  it.effect("a service missing at run time is a defect that names it, as the tag's own lookup is", () =>
    Effect.gen(function*() {
      // The types rule this out; forced here to see what the lookup does.
      const unprovided = withService(Greeter, (greeter) => Effect.succeed(greeter.greet("Cy"))) as Effect.Effect<
        string
      >
      const exit = yield* Effect.exit(unprovided)
      assert.isTrue(Exit.isFailure(exit) && Cause.isDie(exit.cause))
      assert.include(Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "", "test/Greeter")
    }))

  it("the service stays in the requirements: running without it does not type-check", () => {
    const greeting = withService(Greeter, (greeter) => Effect.succeed(greeter.greet("Di")))
    // @ts-expect-error Greeter is required and not provided
    const run = () => Effect.runSync(greeting)
    assert.isFunction(run)
    const context = services<Counter>()
    // @ts-expect-error Counter is required and not provided
    const runContext = () => Effect.runSync(context)
    assert.isFunction(runContext)
  })

  it.effect("withStepService also gives the fiber's clock and whether a tracer exports spans", () =>
    Effect.gen(function*() {
      const seen = withStepService(
        Greeter,
        (greeter, { clock, traced }) =>
          Effect.succeed(`${greeter.greet("Ed")} at ${clock.unsafeCurrentTimeMillis()} traced=${traced}`)
      ).pipe(
        Effect.provideService(Greeter, english)
      )
      // The test's clock (TestClock), not the system's; the default tracer exports nothing.
      yield* TestClock.setTime(1_234)
      assert.strictEqual(yield* seen, "hello Ed at 1234 traced=false")
      // Any tracer but the default one exports: one that hands its spans to the default is enough here.
      const base = yield* Effect.tracer
      const exporting = Tracer.make({
        span: (...args: Parameters<Tracer.Tracer["span"]>) => base.span(...args),
        context: (f) => f()
      })
      assert.strictEqual(yield* Effect.withTracer(seen, exporting), "hello Ed at 1234 traced=true")
    }))

  it("withStepService keeps the service in the requirements", () => {
    const greeting = withStepService(Greeter, (greeter) => Effect.succeed(greeter.greet("Fay")))
    // @ts-expect-error Greeter is required and not provided
    const run = () => Effect.runSync(greeting)
    assert.isFunction(run)
  })

  it.effect("servicesAndRuntime gives the context, the clock and the tracer's verdict at once", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(5_000)
      const { context, runtime } = yield* servicesAndRuntime<Greeter>().pipe(Effect.provideService(Greeter, italian))
      assert.strictEqual(Context.get(context, Greeter).greet("Gil"), "ciao Gil")
      assert.strictEqual(runtime.clock.unsafeCurrentTimeMillis(), 5_000)
      assert.isFalse(runtime.traced)
    }))
})
