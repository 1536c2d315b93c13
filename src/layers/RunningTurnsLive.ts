import { Effect, Equal, Fiber, Layer } from "effect"
import { RunningTurns } from "../services/RunningTurns.js"

/** Running turns kept in memory: a turn of another process is not stopped from here. */
export const RunningTurnsLive = Layer.sync(RunningTurns, () => {
  const running = new Map<string, Set<Fiber.RuntimeFiber<unknown, unknown>>>()
  return RunningTurns.of({
    enter: (sessionId) =>
      Effect.withFiberRuntime((fiber) => {
        const self = fiber as Fiber.RuntimeFiber<unknown, unknown>
        const fibers = running.get(sessionId) ?? new Set()
        running.set(sessionId, fibers)
        fibers.add(self)
        return Effect.succeed(Effect.sync(() => {
          fibers.delete(self)
          if (fibers.size === 0) running.delete(sessionId)
        }))
      }),
    stop: (sessionId) =>
      Effect.withFiberRuntime((caller) => {
        const others = [...(running.get(sessionId) ?? [])].filter((fiber) => !Equal.equals(fiber.id(), caller.id()))
        return Effect.as(Fiber.interruptAll(others), others.length)
      }),
    count: Effect.sync(() => [...running.values()].reduce((total, fibers) => total + fibers.size, 0))
  })
})
