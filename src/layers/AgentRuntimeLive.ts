import { Context, Effect, Layer, Scope } from "effect"
import { runTurn, type TurnHooks, type TurnServices } from "../programs/turn/Turn.js"
import { AgentRuntime, type TurnInput } from "../services/AgentRuntime.js"
import { Metrics } from "../services/Metrics.js"

/** Every service of `services` is in `current`, as the very same instance. */
const holdsAll = <R>(current: Context.Context<never>, services: Context.Context<R>): boolean => {
  for (const [key, service] of services.unsafeMap) {
    if (current.unsafeMap.get(key) !== service) return false
  }
  return true
}

/**
 * `program(input)` with `services`. A caller run by the application's own runtime already has these very services
 * in its context: the effect then runs in it as it is, since providing them would copy the caller's whole context,
 * and keep the copy while the turn runs, for every turn. Either way the effect sees the same services. The effect is
 * made as it runs, in the one operation that reads the context: whoever runs a turn keeps the effect it was given
 * until the turn ends (a runtime's `runPromise` does), and this one holds one closure, not the turn's program.
 */
const withServices = <I, A, E, R>(
  program: (input: I) => Effect.Effect<A, E, R>,
  input: I,
  services: Context.Context<R>
): Effect.Effect<A, E> =>
  Effect.withFiberRuntime((fiber) =>
    holdsAll(fiber.currentContext, services)
      // Checked just above: what the effect requires is already in the context it runs in.
      ? program(input) as Effect.Effect<A, E>
      : Effect.provide(program(input), services)
  )

/**
 * The runtime over whatever services the layer below provides: the turn program with its services bound, each
 * turn counted as active while it runs (its closed trace is counted by the TraceSink).
 */
export const AgentRuntimeLive = Layer.effect(
  AgentRuntime,
  Effect.gen(function*() {
    const metrics = yield* Metrics
    // What the turn needs, without what building layers adds to a context (their scope and memo map): no turn
    // uses either from its context.
    const context = Context.omit(Scope.Scope, Layer.CurrentMemoMap)(yield* Effect.context<TurnServices>())
    // Counted inside the turn's own region rather than in one more around it.
    const hooks: TurnHooks = {
      started: (input) => metrics.turnStarted(input.channel),
      ended: (input) => metrics.turnEnded(input.channel)
    }
    const turn = (input: TurnInput) => runTurn(input, hooks)
    return AgentRuntime.of({
      handle: (input) => withServices(turn, input, context)
    })
  })
)
