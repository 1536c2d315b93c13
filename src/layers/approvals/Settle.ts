import { Clock, Effect, Either } from "effect"
import type { ApprovalVia } from "../../domain/ApprovalVia.js"
import type { AuditError } from "../../domain/Errors.js"
import type { ApprovalAnswer, ApprovalRequest, ApprovalVerdict, PendingApproval } from "../../services/Approvals.js"
import { answeredReason, targetGlobOf, windowOf } from "./Decisions.js"
import type { makeGrants } from "./Grants.js"
import { type ApprovalRecord, approvalRecord, subjectOfRequest } from "./Records.js"
import type { ApprovalStore } from "./Store.js"

/** How a request ended: an answer, its expiry, or a denial by the service itself (audit failure, interruption). */
export type Outcome =
  | { readonly _tag: "Answered"; readonly answer: ApprovalAnswer }
  | { readonly _tag: "Timeout" }
  | { readonly _tag: "Denied"; readonly via: ApprovalVia; readonly reason: string }

export const denied = (
  request: ApprovalRequest,
  requestId: string | null,
  via: ApprovalVia,
  reason: string
): ApprovalVerdict => ({
  granted: false,
  via,
  reason,
  requestId,
  argsHash: request.argsHash
})

/**
 * Settles a request once: durable first (a conditional UPDATE from pending to consumed), then audited; a grant
 * whose verdict cannot be audited becomes a denial. A granted window opens its grant.
 */
export const makeSettle = (deps: {
  readonly store: ApprovalStore
  readonly grants: Effect.Effect.Success<typeof makeGrants>
  readonly record: (record: ApprovalRecord) => Effect.Effect<Either.Either<void, AuditError>>
  readonly timeoutMs: number
}) =>
(pending: PendingApproval, outcome: Outcome): Effect.Effect<ApprovalVerdict> =>
  Effect.uninterruptible(Effect.gen(function*() {
    const { request, requestId } = pending
    const subject = subjectOfRequest(request)
    const decidedAt = yield* Clock.currentTimeMillis
    const decision = outcome._tag === "Answered" ? outcome.answer.decision : null
    const granted = decision !== null && decision._tag !== "Deny"
    const window = decision !== null && granted ? windowOf(decision, decidedAt) : undefined
    const via = outcome._tag === "Answered"
      ? outcome.answer.via
      : outcome._tag === "Timeout"
      ? "timeout"
      : outcome.via
    const reason = outcome._tag === "Answered"
      ? answeredReason(request, outcome.answer, window)
      : outcome._tag === "Timeout"
      ? `no answer within ${deps.timeoutMs / 1000} s`
      : outcome.reason
    const claimed = yield* deps.store.consume(requestId, { granted, via, reason, decidedAt }).pipe(Effect.either)
    if (Either.isLeft(claimed) || !claimed.right) {
      const why = Either.isLeft(claimed)
        ? `the approvals store failed (${claimed.left.message})`
        : "it was already settled"
      const failed = denied(request, requestId, "store_failed", `${why}, so the request is denied`)
      yield* deps.record(approvalRecord(decidedAt, "verdict", requestId, subject, failed))
      return failed
    }
    const audited = yield* deps.record(approvalRecord(decidedAt, "verdict", requestId, subject, {
      granted,
      via,
      reason,
      batchWindowExpiresAt: window
    }))
    if (Either.isLeft(audited) && granted) {
      const failed = denied(
        request,
        requestId,
        "audit_failed",
        `the audit log could not record the verdict (${audited.left.message}), so it is denied`
      )
      yield* deps.store.revoke(requestId, { ...failed, decidedAt }).pipe(Effect.ignoreLogged)
      return failed
    }
    if (decision !== null && granted && window !== undefined) {
      yield* deps.grants.open({
        requestId,
        sessionId: request.sessionId,
        tool: request.tool,
        targetGlob: targetGlobOf(decision),
        target: request.target,
        expiresAt: window
      })
    }
    return { granted, via, reason, requestId, argsHash: request.argsHash }
  }))
