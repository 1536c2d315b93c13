import { Effect, FiberRef, Layer, Option } from "effect"
import type { SessionHistory } from "../../domain/Session.js"
import { CurrentReplay } from "../../services/Replaying.js"
import { Sessions } from "../../services/Sessions.js"

/**
 * The sessions of a replay: the recorded history (summary and verbatim turns) is what the prompt gets again,
 * whoever asks, and nothing is stored (a replay never adds to the owner's sessions).
 */
export const SessionsReplay = Layer.succeed(
  Sessions,
  Sessions.of({
    history: (sessionId) =>
      Effect.map(FiberRef.get(CurrentReplay), (session): SessionHistory => {
        if (session === null || sessionId !== session.recorded.session_id) return { summary: null, turns: [] }
        const replay = session.recorded.replay
        const summary = replay?.summary
        const turns = (replay?.history ?? []).map((turn, i) => ({
          seq: i + 1,
          trace_id: "",
          user_message: turn.user_message,
          final_response: turn.final_response,
          at: 0,
          prompt_tokens: 0,
          cached_tokens: 0,
          response_tokens: 0,
          tainted_by: turn.tainted_by ?? [],
          answered_at: turn.answered_at ?? null
        }))
        return {
          summary: summary === undefined ? null : { covers_through: 0, at: 0, ...summary },
          turns
        }
      }),
    recordTurn: () => Effect.void,
    addSummary: () => Effect.void,
    startNew: (channel) => Effect.succeed(`${channel}-replay`),
    list: Effect.succeed([]),
    show: () => Effect.succeed(Option.none()),
    forget: () => Effect.succeed(0)
  })
)
