import { Effect, Layer } from "effect"
import { OwnerNotices } from "../services/OwnerNotices.js"

/** The owner's channels registered in this process; a notice goes to each, one after the other. */
export const OwnerNoticesLive = Layer.sync(OwnerNotices, () => {
  const channels = new Map<string, (text: string) => Effect.Effect<void>>()
  return OwnerNotices.of({
    register: (name, send) =>
      Effect.acquireRelease(
        Effect.sync(() => channels.set(name, send)),
        () => Effect.sync(() => channels.delete(name))
      ),
    notify: (text) =>
      Effect.suspend(() => {
        const registered = [...channels]
        return Effect.as(
          Effect.forEach(registered, ([, send]) => send(text), { discard: true }),
          registered.map(([name]) => name)
        )
      })
  })
})
