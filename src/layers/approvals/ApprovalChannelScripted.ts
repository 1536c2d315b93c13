import { Context, Effect, Layer, Option, Queue } from "effect"
import type { ApprovalAnswer, ApprovalDecision, PendingApproval } from "../../services/Approvals.js"
import { ApprovalChannel } from "../../services/Approvals.js"

/** What a scripted channel was asked, for tests to inspect or to answer later through `Approvals.answer`. */
export class PresentedApprovals extends Context.Tag("myclaw/PresentedApprovals")<PresentedApprovals, {
  /** Every request presented so far, oldest first. */
  readonly all: Effect.Effect<ReadonlyArray<PendingApproval>>
  /** The next request presented, waiting for it if there is none yet; each is taken once. */
  readonly next: Effect.Effect<PendingApproval>
}>() {}

/** The answer the owner of the session gives, with the request's nonce. */
export const ownerAnswer = (pending: PendingApproval, decision: ApprovalDecision): ApprovalAnswer => ({
  requestId: pending.requestId,
  nonce: pending.nonce,
  answerer: pending.request.requester,
  decision
})

/**
 * A channel that answers with a function of the request: Some answer at once, or None to leave it to a later
 * `Approvals.answer` (or to expiry). For tests, demos and embedding programs.
 */
export const ApprovalChannelScripted = (respond: (pending: PendingApproval) => Option.Option<ApprovalAnswer>) =>
  Layer.effectContext(
    Effect.gen(function*() {
      const presented: Array<PendingApproval> = []
      const queue = yield* Queue.unbounded<PendingApproval>()
      const channel = ApprovalChannel.of({
        present: (pending) =>
          Effect.sync(() => presented.push(pending)).pipe(
            Effect.zipRight(Queue.offer(queue, pending)),
            Effect.map(() => respond(pending))
          )
      })
      return Context.make(ApprovalChannel, channel).pipe(
        Context.add(PresentedApprovals, { all: Effect.sync(() => presented.slice()), next: Queue.take(queue) })
      )
    })
  )

/** Answers every request with the same decision, as its owner. */
export const ApprovalChannelAlways = (decision: ApprovalDecision) =>
  ApprovalChannelScripted((pending) => Option.some(ownerAnswer(pending, decision)))
