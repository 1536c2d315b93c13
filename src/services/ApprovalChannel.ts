import { Context } from "effect"
import type { Effect, Option } from "effect"
import type { ApprovalAnswer, PendingApproval } from "./Approvals.js"

/**
 * How a request reaches its owner. `present` returns the owner's answer when it has one at hand (a terminal
 * prompt), or None when the answer will come later through `Approvals.answer` (a button press, the HTTP
 * approvals API) or never (the request then expires).
 */
export class ApprovalChannel extends Context.Tag("myclaw/ApprovalChannel")<ApprovalChannel, {
  readonly present: (pending: PendingApproval) => Effect.Effect<Option.Option<ApprovalAnswer>>
  /** Whether `answerer` speaks for the owner who asked as `requester`: the requester itself, or an owner's channel. */
  readonly mayAnswer: (answerer: string, requester: string) => boolean
}>() {}
