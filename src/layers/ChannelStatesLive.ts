import { Effect, Layer } from "effect"
import { type ChannelState, ChannelStates } from "../services/ChannelStates.js"

/** The states in this process; a failure keeps the time it began while it goes on. */
export const ChannelStatesLive = Layer.sync(ChannelStates, () => {
  const states = new Map<string, ChannelState>()
  return ChannelStates.of({
    report: (channel, state) =>
      Effect.sync(() => {
        const before = states.get(channel)
        states.set(
          channel,
          state._tag === "Failing" && before?._tag === "Failing" ? { ...state, since: before.since } : state
        )
      }),
    get: (channel) => Effect.sync(() => states.get(channel))
  })
})
