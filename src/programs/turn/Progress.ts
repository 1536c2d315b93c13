import { Effect, FiberRef } from "effect"

/** What a running turn is doing, for a channel that shows progress: a new step, or a tool starting. */
export type TurnProgress =
  | { readonly _tag: "Step"; readonly step: number; readonly maxSteps: number }
  | { readonly _tag: "Tool"; readonly name: string }

/** Where a turn reports its progress: nowhere by default; a channel sets it around the turn it runs. */
export const TurnProgressListener = FiberRef.unsafeMake<(progress: TurnProgress) => Effect.Effect<void>>(
  () => Effect.void
)

export const reportProgress = (progress: TurnProgress): Effect.Effect<void> =>
  Effect.flatMap(FiberRef.get(TurnProgressListener), (listener) => listener(progress))
