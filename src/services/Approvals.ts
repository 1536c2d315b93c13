import { Context } from "effect"
import type { Effect } from "effect"

export interface ApprovalRequest {
  readonly tool: string
  readonly summary: string
  readonly target: string
  readonly args: unknown
  readonly reason: string
  readonly sessionId: string
  readonly traceId: string
  readonly channel: string
}

export interface ApprovalVerdict {
  readonly granted: boolean
  /** `user` (answered), `timeout`, `non_interactive` (nobody to ask), or the name of a scripted answerer. */
  readonly via: string
  readonly reason: string
}

/** Asks the owner; the channels implement it. An unanswered request counts as denied. */
export class Approvals extends Context.Tag("myclaw/Approvals")<Approvals, {
  readonly request: (request: ApprovalRequest) => Effect.Effect<ApprovalVerdict>
}>() {}
