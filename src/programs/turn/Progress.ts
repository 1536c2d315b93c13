import { Effect, FiberRef } from "effect"

/** What a running turn is doing, for a channel that shows progress: a new step, or a tool starting. */
export type TurnProgress =
  | { readonly _tag: "Step"; readonly step: number; readonly maxSteps: number }
  | { readonly _tag: "Tool"; readonly name: string }

/** Where a turn reports its progress: nowhere by default; a channel sets it around the turn it runs. */
export const TurnProgressListener = FiberRef.unsafeMake<(progress: TurnProgress) => Effect.Effect<void>>(
  () => Effect.void
)

// One lookup in the running fiber: it runs at every step and before every tool.
export const reportProgress = (progress: TurnProgress): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) => fiber.getFiberRef(TurnProgressListener)(progress))
