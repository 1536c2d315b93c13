import { Effect, Layer, Option } from "effect"
import { TraceStore } from "../../services/TraceStore.js"

/** The trace store of a replay: the replayed trace is kept nowhere (a replay never adds to the owner's traces). */
export const TraceStoreReplay = Layer.succeed(
  TraceStore,
  TraceStore.of({
    persist: () => Effect.void,
    get: () => Effect.succeed(Option.none()),
    list: () => Effect.succeed([])
  })
)
