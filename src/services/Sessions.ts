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
  /** Adds a finished turn (creating the session, owned by `owner`, when it is new). */
  readonly recordTurn: (turn: NewSessionTurn) => Effect.Effect<void, SessionError>
  /** Stores a summary that replaces, in prompts, every turn up to `covers_through`; the turns stay stored. */
  readonly addSummary: (sessionId: string, summary: SessionSummary) => Effect.Effect<void, SessionError>
  /** Opens a new, empty session for `owner` on `channel` (a kind such as `telegram`) and returns its id. */
  readonly startNew: (channel: string, owner: string) => Effect.Effect<string, SessionError>
  /** Every session, the most recently active first. */
  readonly list: Effect.Effect<ReadonlyArray<SessionInfo>, SessionError>
  /** One session whole: its turns and summaries. */
  readonly show: (sessionId: string) => Effect.Effect<Option.Option<SessionDetail>, SessionError>
  /** Deletes the session's turns and summaries; how many turns were deleted (`NotFound` for no such session). */
  readonly forget: (sessionId: string) => Effect.Effect<number, SessionError>
}>() {}
