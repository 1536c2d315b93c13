import { Schema } from "effect"

/** A finished turn as its session keeps it: what the prompts of the next turns replay, and what it cost. */
export const SessionTurn = Schema.Struct({
  /** 1, 2, 3... within the session, in the order the turns finished. */
  seq: Schema.Number,
  trace_id: Schema.String,
  user_message: Schema.String,
  final_response: Schema.NullOr(Schema.String),
  /** When it finished, epoch milliseconds. */
  at: Schema.Number,
  prompt_tokens: Schema.Number,
  cached_tokens: Schema.Number,
  response_tokens: Schema.Number,
  /** The untrusted sources that tainted it (its answer comes back wrapped as data). */
  tainted_by: Schema.Array(Schema.String),
  answered_at: Schema.NullOr(Schema.String)
})
export type SessionTurn = typeof SessionTurn.Type

/** A summary of the session's turns up to `covers_through` (the previous summary folded in). */
export const SessionSummary = Schema.Struct({
  covers_through: Schema.Number,
  text: Schema.String,
  at: Schema.Number,
  /** The untrusted sources of the turns it summarises: it comes back wrapped as data, and taints the turn. */
  tainted_by: Schema.Array(Schema.String)
})
export type SessionSummary = typeof SessionSummary.Type

/** A session: which channel it lives on, the one owner who may read it, and how much it holds. */
export const SessionInfo = Schema.Struct({
  id: Schema.String,
  /** The kind of channel: `cli`, `http`, `telegram`... */
  channel: Schema.String,
  /** The sender that owns it, e.g. `cli:alice`, `telegram:@alice`. */
  owner: Schema.String,
  created_at: Schema.Number,
  last_active_at: Schema.Number,
  turns: Schema.Number,
  summaries: Schema.Number
})
export type SessionInfo = typeof SessionInfo.Type

/** What the prompt's history blocks need: the newest summary and the turns after it, oldest first. */
export interface SessionHistory {
  readonly summary: SessionSummary | null
  readonly turns: ReadonlyArray<SessionTurn>
}

export const emptyHistory: SessionHistory = { summary: null, turns: [] }

/** A finished turn to add to its session (the session is created, owned by `owner`, when it is new). */
export interface NewSessionTurn {
  readonly sessionId: string
  readonly owner: string
  readonly traceId: string
  readonly userMessage: string
  readonly finalResponse: string | null
  readonly at: number
  readonly promptTokens: number
  readonly cachedTokens: number
  readonly responseTokens: number
  readonly taintedBy: ReadonlyArray<string>
  readonly answeredAt: string | null
}

/** A new turn as its session stores it, but for its number (the store gives it the next one). */
export const storedTurn = (turn: NewSessionTurn): Omit<SessionTurn, "seq"> => ({
  trace_id: turn.traceId,
  user_message: turn.userMessage,
  final_response: turn.finalResponse,
  at: turn.at,
  prompt_tokens: turn.promptTokens,
  cached_tokens: turn.cachedTokens,
  response_tokens: turn.responseTokens,
  tainted_by: turn.taintedBy,
  answered_at: turn.answeredAt
})

/** The kind of channel of a sender: `telegram` for `telegram:@alice`. */
export const channelKind = (owner: string): string => {
  const colon = owner.indexOf(":")
  return colon <= 0 ? owner : owner.slice(0, colon)
}

/**
 * A session cannot be used: it belongs to another owner (`Forbidden`), does not exist (`NotFound`), or its store
 * cannot be read or written (`Io`).
 */
export class SessionError extends Schema.TaggedError<SessionError>()("SessionError", {
  sessionId: Schema.String,
  reason: Schema.Literal("Forbidden", "NotFound", "Io"),
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}

export const forbidden = (sessionId: string): SessionError =>
  new SessionError({
    sessionId,
    reason: "Forbidden",
    message: `the session ${sessionId} belongs to another owner: it cannot be read or continued from this channel`
  })
