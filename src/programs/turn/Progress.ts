import { Effect, type Fiber, FiberRef } from "effect"
import type { ExecutionTrace } from "../../domain/ExecutionTrace.js"

/**
 * What a running turn is doing, for a channel that shows progress: a new step, a tool starting, and last its
 * trace, closed and persisted, however the turn ended (a turn that `/stop` interrupts returns no trace: its fiber
 * ends interrupted).
 */
export type TurnProgress =
  | { readonly _tag: "Step"; readonly step: number; readonly maxSteps: number }
  | { readonly _tag: "Tool"; readonly name: string }
  | { readonly _tag: "Closed"; readonly trace: ExecutionTrace }

/** The listener of a turn that nobody watches. */
const silent = (_progress: TurnProgress): Effect.Effect<void> => Effect.void

/** Where a turn reports its progress: nowhere by default; a channel sets it around the turn it runs. */
export const TurnProgressListener = FiberRef.unsafeMake<(progress: TurnProgress) => Effect.Effect<void>>(silent)

/** The fiber's listener, or undefined when it is the silent one. */
const listenerOf = (fiber: Fiber.RuntimeFiber<unknown, unknown>) => {
  const listener = fiber.getFiberRef(TurnProgressListener)
  return listener === silent ? undefined : listener
}

/** The running fiber's listener, or undefined when nobody listens: a turn reads it once, when it opens. */
export const progressListener: Effect.Effect<((progress: TurnProgress) => Effect.Effect<void>) | undefined> = Effect
  .withFiberRuntime((fiber) => Effect.succeed(listenerOf(fiber)))
