import { Effect, Layer } from "effect"
import type { DrawnId } from "../../domain/ExecutionTrace.js"
import { IdGenerator, type IdKind, logDrawn } from "../../services/IdGenerator.js"
import { sequentialId } from "./IdGeneratorSequential.js"

/**
 * The ids a recorded turn drew, handed out again kind by kind in the recorded order; once a kind's recorded ids
 * are used up (the replay drew more than the recording), sequential ids follow, which a replay then reports as
 * a difference wherever they show.
 */
export const makeIdGeneratorReplay = (recorded: ReadonlyArray<DrawnId>) =>
  Effect.sync(() => {
    const queues = new Map<IdKind, Array<string>>()
    for (const drawn of recorded) {
      const queue = queues.get(drawn.kind) ?? []
      queue.push(drawn.id)
      queues.set(drawn.kind, queue)
    }
    const extra = new Map<IdKind, number>()
    const next = (kind: IdKind): string => {
      const id = queues.get(kind)?.shift()
      if (id !== undefined) return id
      const n = (extra.get(kind) ?? 0) + 1
      extra.set(kind, n)
      return sequentialId(kind, n)
    }
    return IdGenerator.of({ next: (kind) => Effect.flatMap(Effect.sync(() => next(kind)), (id) => logDrawn(kind, id)) })
  })

export const IdGeneratorReplay = (recorded: ReadonlyArray<DrawnId>) =>
  Layer.effect(IdGenerator, makeIdGeneratorReplay(recorded))
