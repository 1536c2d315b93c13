import { Context } from "effect"
import type { Effect, Option } from "effect"
import type {
  NewSessionTurn,
  SessionError,
  SessionHistory,
  SessionInfo,
  SessionSummary,
  SessionTurn
} from "../domain/Session.js"

/** A turn a trace says was closed: its session, its trace, and when it started (epoch milliseconds). */
export interface UnrecordedCandidate {
  readonly sessionId: string
  readonly traceId: string
  readonly startedAt: number
}

export interface SessionDetail {
  readonly info: SessionInfo
  readonly turns: ReadonlyArray<SessionTurn>
  readonly summaries: ReadonlyArray<SessionSummary>
}

/**
 * Conversations and their history, durable across restarts: each session has one owner, and no other owner can
 * read or continue it. The history a prompt needs is read per session, never the whole store.
 */
export class Sessions extends Context.Tag("myclaw/Sessions")<Sessions, {
  /**
   * The newest summary and the turns after it, oldest first; empty for a session not seen before. Fails
   * `Forbidden` when the session belongs to another owner.
   */
  readonly history: (sessionId: string, owner: string) => Effect.Effect<SessionHistory, SessionError>
  /**
   * Adds a finished turn (creating the session, owned by `owner`, when it is new). Fails `Forbidden` when the
   * session belongs to another owner. Its session's next reads see it; the record itself may be written a little
   * later, with others (a process that stops before finds it in the traces: `unrecorded`).
   */
  readonly recordTurn: (turn: NewSessionTurn) => Effect.Effect<void, SessionError>
  /**
   * Of the given turns, the traces of those not in their session, in the order given: turns a process closed and
   * stopped before their record was written. A turn of a session forgotten since it started is not among them.
   */
  readonly unrecorded: (
    turns: ReadonlyArray<UnrecordedCandidate>
  ) => Effect.Effect<ReadonlyArray<string>, SessionError>
  /** Stores a summary that replaces, in prompts, every turn up to `covers_through`; the turns stay stored. */
  readonly addSummary: (sessionId: string, summary: SessionSummary) => Effect.Effect<void, SessionError>
  /**
   * Gives the session to `owner` when another identity of the same person holds it, as `mayTake` judges from the
   * stored owner (a Telegram user whose @username changed: the chat's session is theirs); nothing changes for a
   * session that is missing, `owner`'s already, or not `mayTake`'s. The owner it has afterwards (undefined: none).
   */
  readonly reown: (
    sessionId: string,
    owner: string,
    mayTake: (stored: string) => boolean
  ) => Effect.Effect<string | undefined, SessionError>
  /** Opens a new, empty session for `owner` on `channel` (a kind such as `telegram`) and returns its id. */
  readonly startNew: (channel: string, owner: string) => Effect.Effect<string, SessionError>
  /** Every session, the most recently active first. */
  readonly list: Effect.Effect<ReadonlyArray<SessionInfo>, SessionError>
  /** One session whole: its turns and summaries. */
  readonly show: (sessionId: string) => Effect.Effect<Option.Option<SessionDetail>, SessionError>
  /** Deletes the session's turns and summaries; how many turns were deleted (`NotFound` for no such session). */
  readonly forget: (sessionId: string) => Effect.Effect<number, SessionError>
}>() {}
