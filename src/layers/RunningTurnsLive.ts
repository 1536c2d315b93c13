import { Effect, Equal, Fiber, Layer } from "effect"
import { RunningTurns } from "../services/RunningTurns.js"

type Running = Fiber.RuntimeFiber<unknown, unknown>

/**
 * Running turns kept in memory: a turn of another process is not stopped from here. A session runs one turn at a
 * time as a rule: its entry is that turn's fiber, and a set only while it runs several (a set and its table are
 * what an open conversation would otherwise hold for the rule).
 */
export const RunningTurnsLive = Layer.sync(RunningTurns, () => {
  const running = new Map<string, Running | Set<Running>>()
  const fibersOf = (sessionId: string): ReadonlyArray<Running> => {
    const entry = running.get(sessionId)
    return entry === undefined ? [] : entry instanceof Set ? [...entry] : [entry]
  }
  const leave = (sessionId: string, self: Running) => {
    const entry = running.get(sessionId)
    if (entry === self) running.delete(sessionId)
    else if (entry instanceof Set) {
      entry.delete(self)
      if (entry.size === 0) running.delete(sessionId)
    }
  }
  return RunningTurns.of({
    enter: (sessionId) =>
      Effect.withFiberRuntime((fiber) => {
        const self = fiber as Running
        const entry = running.get(sessionId)
        if (entry === undefined) running.set(sessionId, self)
        else if (entry instanceof Set) entry.add(self)
        else running.set(sessionId, new Set([entry, self]))
        return Effect.void
      }),
    leave: (sessionId) =>
      Effect.withFiberRuntime((fiber) => {
        leave(sessionId, fiber as Running)
        return Effect.void
      }),
    stop: (sessionId) =>
      Effect.withFiberRuntime((caller) => {
        const others = fibersOf(sessionId).filter((fiber) => !Equal.equals(fiber.id(), caller.id()))
        return Effect.as(Fiber.interruptAll(others), others.length)
      }),
    count: Effect.sync(() => {
      let total = 0
      for (const entry of running.values()) total += entry instanceof Set ? entry.size : 1
      return total
    })
  })
})
