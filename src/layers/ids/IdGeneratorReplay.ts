import { Effect, Layer } from "effect"
import { drawId, IdGenerator, type IdKind } from "../../services/IdGenerator.js"
import { currentReplay, type ReplaySession } from "../../services/Replaying.js"
import { sequentialId } from "./IdGeneratorSequential.js"

const nextId = (session: ReplaySession, kind: IdKind): string => {
  const id = session.ids.get(kind)?.shift()
  if (id !== undefined) return id
  const n = (session.extraIds.get(kind) ?? 0) + 1
  session.extraIds.set(kind, n)
  return sequentialId(kind, n)
}

/**
 * The ids the replayed turn drew when it was recorded, handed out again kind by kind in the recorded order;
 * once a kind's recorded ids are used up (the replay drew more than the recording), sequential ids follow,
 * which the replay then reports as a difference wherever they show.
 */
export const IdGeneratorReplay = Layer.succeed(
  IdGenerator,
  IdGenerator.of({
    next: (kind) => Effect.flatMap(currentReplay, (session) => drawId(kind, (k) => nextId(session, k)))
  })
)
