import { Context, Effect, Layer, Option, Queue } from "effect"
import { ApprovalChannel } from "../../services/ApprovalChannel.js"
import { type ApprovalAsker, ApprovalRouter } from "../../services/ApprovalRouter.js"
import type { ApprovalAnswer, ApprovalDecision, PendingApproval } from "../../services/Approvals.js"

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
  decision,
  via: "scripted"
})

type Respond = (pending: PendingApproval) => Option.Option<ApprovalAnswer>

const makeScripted = (respond: Respond) =>
  Effect.gen(function*() {
    const presented: Array<PendingApproval> = []
    const queue = yield* Queue.unbounded<PendingApproval>()
    const asker: ApprovalAsker = {
      via: "scripted",
      owners: [],
      present: (pending) =>
        Effect.sync(() => presented.push(pending)).pipe(
          Effect.zipRight(Queue.offer(queue, pending)),
          Effect.map(() => respond(pending))
        )
    }
    const inspect = PresentedApprovals.of({ all: Effect.sync(() => presented.slice()), next: Queue.take(queue) })
    return { asker, inspect } as const
  })

/**
 * A channel that answers with a function of the request: Some answer at once, or None to leave it to a later
 * `Approvals.answer` (or to expiry). For tests, demos and embedding programs that use Approvals alone.
 */
export const ApprovalChannelScripted = (respond: Respond) =>
  Layer.effectContext(
    Effect.map(makeScripted(respond), ({ asker, inspect }) =>
      Context.make(
        ApprovalChannel,
        ApprovalChannel.of({ present: asker.present, mayAnswer: (answerer, requester) => answerer === requester })
      ).pipe(Context.add(PresentedApprovals, inspect)))
  )

/** Answers every request with the same decision, as its owner. */
export const ApprovalChannelAlways = (decision: ApprovalDecision) =>
  ApprovalChannelScripted((pending) => Option.some(ownerAnswer(pending, decision)))

/**
 * The scripted asker registered on the approval router for turns of every channel without an asker of its own:
 * the whole graph, routing included, with an owner who answers by script.
 */
export const ApprovalAskerScripted = (respond: Respond) =>
  Layer.scoped(
    PresentedApprovals,
    Effect.gen(function*() {
      const router = yield* ApprovalRouter
      const { asker, inspect } = yield* makeScripted(respond)
      yield* router.askOn("*", asker)
      return inspect
    })
  )
