import { Effect, Layer } from "effect"
import { runTurn, type TurnServices } from "../programs/turn/Turn.js"
import { AgentRuntime } from "../services/AgentRuntime.js"
import { Metrics } from "../services/Metrics.js"

/**
 * The runtime over whatever services the layer below provides: the turn program with its services bound, each
 * turn counted as active while it runs (its closed trace is counted by the TraceSink).
 */
export const AgentRuntimeLive = Layer.effect(
  AgentRuntime,
  Effect.gen(function*() {
    const metrics = yield* Metrics
    const context = yield* Effect.context<TurnServices>()
    return AgentRuntime.of({
      handle: (input) =>
        Effect.acquireUseRelease(
          metrics.turnStarted(input.channel),
          () => Effect.provide(runTurn(input), context),
          () => metrics.turnEnded(input.channel)
        )
    })
  })
)
