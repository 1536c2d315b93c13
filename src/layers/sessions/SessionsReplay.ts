import { Effect, FiberRef, Layer, Option } from "effect"
import type { SessionHistory, SessionTurn } from "../../domain/Session.js"
import { CurrentReplay, type ReplaySession } from "../../services/Replaying.js"
import { Sessions } from "../../services/Sessions.js"

type RecordedTurn = NonNullable<ReplaySession["recorded"]["replay"]>["history"][number]

const sessionTurn = (turn: RecordedTurn, seq: number): SessionTurn => ({
  seq,
  trace_id: "",
  user_message: turn.user_message,
  final_response: turn.final_response,
  at: 0,
  prompt_tokens: 0,
  cached_tokens: 0,
  response_tokens: 0,
  tainted_by: turn.tainted_by ?? [],
  answered_at: turn.answered_at ?? null
})

/**
 * The session history of the replayed turn. A turn that summarised its session on entering it recorded what
 * that summary read: that history comes first, so the replay makes the same summary call; once the replay adds
 * its summary, the history is that summary and the turns after it (as the store gives them). Otherwise (no
 * summary made, or a trace recorded before this was kept) it is the history the recorded prompt held.
 */
const replayedHistory = (session: ReplaySession): SessionHistory => {
  const replay = session.recorded.replay
  const compaction = replay?.compaction
  const recorded = compaction ?? replay
  const summary = recorded?.summary
  const turns = compaction === undefined
    ? (replay?.history ?? []).map((turn, i) => sessionTurn(turn, i + 1))
    : compaction.turns.map((turn) => sessionTurn(turn, turn.seq))
  const added = session.summaryAdded
  if (added !== null) return { summary: added, turns: turns.filter((turn) => turn.seq > added.covers_through) }
  return { summary: summary === undefined ? null : { covers_through: 0, at: 0, ...summary }, turns }
}

/**
 * The sessions of a replay: the recorded history (summary and verbatim turns) is what the prompt gets again,
 * whoever asks, and nothing is stored (a replay never adds to the owner's sessions: a summary it adds is kept in
 * the replay alone).
 */
export const SessionsReplay = Layer.succeed(
  Sessions,
  Sessions.of({
    history: (sessionId) =>
      Effect.map(
        FiberRef.get(CurrentReplay),
        (session): SessionHistory =>
          session === null || sessionId !== session.recorded.session_id
            ? { summary: null, turns: [] }
            : replayedHistory(session)
      ),
    recordTurn: () => Effect.void,
    reown: (_sessionId, owner) => Effect.succeed(owner),
    unrecorded: () => Effect.succeed([]),
    addSummary: (sessionId, summary) =>
      Effect.map(FiberRef.get(CurrentReplay), (session) => {
        if (session !== null && sessionId === session.recorded.session_id) session.summaryAdded = summary
      }),
    startNew: (channel) => Effect.succeed(`${channel}-replay`),
    list: Effect.succeed([]),
    show: () => Effect.succeed(Option.none()),
    forget: () => Effect.succeed(0)
  })
)
