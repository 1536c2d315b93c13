import { Schema } from "effect"

/** The channels an owner answers approval requests on. */
export const AnsweringChannel = Schema.Literal("cli", "http", "telegram", "scripted")
export type AnsweringChannel = typeof AnsweringChannel.Type

/**
 * How an approval verdict came about: the channel the owner answered on; a standing grant (`batch`, `session`);
 * or the runtime deciding alone (`timeout`, `limit`, `no_channel`: nobody could be asked, `non_interactive`: the
 * channel could not ask, `interrupted`, `restart`, `audit_failed`, `store_failed`). `explicit` is an owner's
 * answer recorded before answers named their channel.
 */
export const ApprovalVia = Schema.Literal(
  ...AnsweringChannel.literals,
  "batch",
  "session",
  "timeout",
  "limit",
  "no_channel",
  "non_interactive",
  "interrupted",
  "restart",
  "audit_failed",
  "store_failed",
  "explicit"
)
export type ApprovalVia = typeof ApprovalVia.Type

/** An approval record's `via`: a verdict's, or `pending` for the request itself. */
export const ApprovalRecordVia = Schema.Literal(...ApprovalVia.literals, "pending")
export type ApprovalRecordVia = typeof ApprovalRecordVia.Type

/** Vias of a request somebody (or something on their behalf) answered, as opposed to one that lapsed. */
export const answeredVias: ReadonlySet<string> = new Set<ApprovalVia>([
  ...AnsweringChannel.literals,
  "explicit",
  "non_interactive",
  "no_channel"
])
