import { Effect, FiberRef, Layer, Option } from "effect"
import { CurrentReplay } from "../../services/Replaying.js"
import { TraceStore } from "../../services/TraceStore.js"
import { lastTurns } from "./Recent.js"

/**
 * The trace store of a replay: the recorded session history is what the prompt's history block gets again, and
 * the replayed trace is kept nowhere (a replay never adds to the owner's traces; it returns its trace).
 */
export const TraceStoreReplay = Layer.succeed(
  TraceStore,
  TraceStore.of({
    persist: () => Effect.void,
    recentTurns: (sessionId, limit) =>
      Effect.map(FiberRef.get(CurrentReplay), (session) =>
        session === null || sessionId !== session.recorded.session_id
          ? []
          : lastTurns(session.recorded.replay?.history ?? [], limit).map((turn) => ({
            userMessage: turn.user_message,
            finalResponse: turn.final_response,
            ...(turn.tainted_by === undefined ? {} : { taintedBy: turn.tainted_by }),
            ...(turn.answered_at === undefined ? {} : { answeredAt: turn.answered_at })
          }))),
    get: () => Effect.succeed(Option.none()),
    list: () => Effect.succeed([])
  })
)
