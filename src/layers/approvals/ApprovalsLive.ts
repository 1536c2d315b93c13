import { Clock, Deferred, Duration, Effect, Either, Layer, Option } from "effect"
import type { ApprovalVia } from "../../domain/ApprovalVia.js"
import type { AuditError } from "../../domain/Errors.js"
import { isoAt } from "../../domain/Time.js"
import { ApprovalChannel } from "../../services/ApprovalChannel.js"
import {
  type AnswerOutcome,
  type ApprovalAnswer,
  type ApprovalRequest,
  Approvals,
  type PendingApproval
} from "../../services/Approvals.js"
import { AuditLog } from "../../services/AuditLog.js"
import { IdGenerator } from "../../services/IdGenerator.js"
import { MyclawConfig } from "../../services/MyclawConfig.js"
import * as Compose from "../Compose.js"
import {
  judgeStored,
  makeSessionSlots,
  MaxPendingPerSession,
  newNonce,
  nonceHash,
  type Refusal,
  sameSecret
} from "./Decisions.js"
import { type Grant, grantEffectClass, makeGrants } from "./Grants.js"
import {
  type ApprovalRecord,
  approvalRecord,
  requestReason,
  type Subject,
  subjectOfRequest,
  subjectOfStored,
  unknownSubject
} from "./Records.js"
import { denied, makeSettle, type Outcome } from "./Settle.js"
import { ApprovalsStoreLive, makeApprovalStore, type StoredRequest } from "./Store.js"

export { MaxPendingPerSession } from "./Decisions.js"

export { verifyApprovedArgs } from "../../domain/ArgsHash.js"

type Settled = Extract<Outcome, { readonly _tag: "Answered" | "Timeout" }>

interface Waiting {
  readonly pending: PendingApproval
  readonly settled: Deferred.Deferred<Settled>
}

export const makeApprovals = Effect.gen(function*() {
  const channel = yield* ApprovalChannel
  const ids = yield* IdGenerator
  const newRequestId = ids.next("approval")
  const audit = yield* AuditLog
  const { config } = yield* MyclawConfig
  const store = yield* makeApprovalStore
  const grants = yield* makeGrants
  const timeoutMs = config.approvals.timeoutMs
  const waiting = new Map<string, Waiting>()
  const slots = makeSessionSlots(MaxPendingPerSession)

  const record = (entry: ApprovalRecord): Effect.Effect<Either.Either<void, AuditError>> =>
    audit.append(entry).pipe(
      Effect.tapError((error) => Effect.logError(`cannot append the approval record: ${error.message}`)),
      Effect.either
    )

  const settle = makeSettle({ store, grants, record, timeoutMs })

  const startedAt = yield* Clock.currentTimeMillis
  const leftovers = yield* store.expireAllPending(startedAt, "myclaw restarted while the request was pending")
  for (const row of leftovers) {
    yield* record(approvalRecord(startedAt, "verdict", row.id, subjectOfStored(row), {
      granted: false,
      via: "restart",
      reason: "myclaw restarted while the request was pending"
    }))
  }
  if (leftovers.length > 0) {
    yield* Effect.logWarning(`${leftovers.length} approval request(s) left pending by an earlier run are expired`)
  }

  const refuse = (answer: ApprovalAnswer, subject: Subject, reason: Refusal) =>
    Effect.flatMap(
      Clock.currentTimeMillis,
      (at) =>
        record(approvalRecord(at, "answer_rejected", answer.requestId, { ...subject, sender: answer.answerer }, {
          granted: null,
          via: answer.via,
          reason
        }))
    ).pipe(Effect.as<AnswerOutcome>({ accepted: false, reason }))

  const judgeWaiting = (entry: Waiting, answer: ApprovalAnswer, now: number) =>
    Effect.gen(function*() {
      if (!channel.mayAnswer(answer.answerer, entry.pending.request.requester)) return "foreign" as const
      if (!sameSecret(answer.nonce, entry.pending.nonce)) return "nonce_mismatch" as const
      if (now >= entry.pending.expiresAt) return "expired" as const
      if (yield* Deferred.succeed(entry.settled, { _tag: "Answered", answer })) return null
      const first = yield* Deferred.await(entry.settled)
      return first._tag === "Timeout" ? "expired" as const : "already_answered" as const
    })

  const answer = Effect.fn("Approvals.answer")(function*(answer: ApprovalAnswer) {
    yield* Effect.annotateCurrentSpan({ request_id: answer.requestId, answerer: answer.answerer })
    const now = yield* Clock.currentTimeMillis
    const entry = waiting.get(answer.requestId)
    if (entry !== undefined) {
      const refusal = yield* judgeWaiting(entry, answer, now)
      if (refusal === null) return { accepted: true } as const
      return yield* refuse(answer, subjectOfRequest(entry.pending.request), refusal)
    }
    const row = yield* store.find(answer.requestId).pipe(
      Effect.tapError((error) => Effect.logError(`cannot read the approvals store: ${error.message}`)),
      Effect.orElseSucceed(() => Option.none<StoredRequest>())
    )
    return yield* Option.match(row, {
      onNone: () => refuse(answer, unknownSubject(answer.answerer), "unknown"),
      onSome: (row) => refuse(answer, subjectOfStored(row), judgeStored(row, answer, channel.mayAnswer))
    })
  })

  const wait = (entry: Waiting) =>
    Effect.scoped(Effect.gen(function*() {
      const { pending, settled } = entry
      yield* Clock.currentTimeMillis.pipe(
        Effect.flatMap((now) => Effect.sleep(Duration.millis(Math.max(0, pending.expiresAt - now)))),
        Effect.zipRight(Deferred.succeed(settled, { _tag: "Timeout" })),
        Effect.forkScoped
      )
      yield* channel.present(pending).pipe(
        Effect.flatMap(Option.match({ onNone: () => Effect.void, onSome: (reply) => Effect.asVoid(answer(reply)) })),
        Effect.catchAllDefect((defect) => Effect.logError("the approval channel failed; another may answer", defect)),
        Effect.forkScoped
      )
      return yield* Deferred.await(settled)
    }))

  const ask = (request: ApprovalRequest) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const createdAt = yield* Clock.currentTimeMillis
        const pending: PendingApproval = {
          requestId: yield* newRequestId,
          nonce: newNonce(),
          expiresAt: createdAt + timeoutMs,
          request
        }
        const { requestId } = pending
        const subject = subjectOfRequest(request)
        yield* Effect.annotateCurrentSpan({ request_id: requestId })
        const inserted = yield* store.insertPending({
          id: requestId,
          nonce_hash: nonceHash(pending.nonce),
          session_id: request.sessionId,
          trace_id: request.traceId,
          requester: request.requester,
          channel: request.channel,
          tool: request.tool,
          target: request.target,
          effect_class: request.effectClass,
          args_hash: request.argsHash,
          tainted: request.tainted === null ? 0 : 1,
          created_at: createdAt,
          expires_at: pending.expiresAt
        }).pipe(Effect.either)
        if (Either.isLeft(inserted)) {
          const reason = `the approvals store failed (${inserted.left.message}), so the request is denied`
          const failed = denied(request, requestId, "store_failed", reason)
          yield* record(approvalRecord(createdAt, "verdict", requestId, subject, failed))
          return failed
        }
        const requested = yield* record(approvalRecord(createdAt, "requested", requestId, subject, {
          granted: null,
          via: "pending",
          reason: requestReason(request)
        }))
        if (Either.isLeft(requested)) {
          return yield* settle(pending, {
            _tag: "Denied",
            via: "audit_failed",
            reason: `the audit log could not record the request (${requested.left.message}), so it is denied`
          })
        }
        const entry: Waiting = { pending, settled: yield* Deferred.make<Settled>() }
        waiting.set(requestId, entry)
        return yield* restore(wait(entry)).pipe(
          Effect.onInterrupt(() =>
            settle(pending, { _tag: "Denied", via: "interrupted", reason: "the turn stopped before an answer came" })
          ),
          Effect.flatMap((outcome) => settle(pending, outcome)),
          Effect.ensuring(Effect.sync(() => waiting.delete(requestId)))
        )
      })
    )

  const useGrant = (request: ApprovalRequest, grant: Grant, now: number) =>
    Effect.gen(function*() {
      const requestId = yield* newRequestId
      const via: ApprovalVia = grant.expiresAt === null ? "session" : "batch"
      const reason = `covered by the grant of ${grantEffectClass(grant)} in ${grant.requestId}` +
        (grant.expiresAt === null ? " for this session" : ` until ${isoAt(grant.expiresAt)}`)
      const audited = yield* record(approvalRecord(now, "batch_use", requestId, subjectOfRequest(request), {
        granted: true,
        via,
        reason,
        batchWindowExpiresAt: grant.expiresAt
      }))
      if (Either.isLeft(audited)) {
        const why = `the audit log could not record the use of a grant (${audited.left.message}), so it is denied`
        return denied(request, requestId, "audit_failed", why)
      }
      return { granted: true, via, reason, requestId, argsHash: request.argsHash }
    })

  const overLimit = (request: ApprovalRequest) =>
    Effect.gen(function*() {
      const reason = `${MaxPendingPerSession} approval requests already wait for an answer in this session, ` +
        "so this one is denied without asking"
      const verdict = denied(request, null, "limit", reason)
      const at = yield* Clock.currentTimeMillis
      yield* record(approvalRecord(at, "verdict", yield* newRequestId, subjectOfRequest(request), verdict))
      return verdict
    })

  const request = Effect.fn("Approvals.request")(function*(request: ApprovalRequest) {
    yield* Effect.annotateCurrentSpan({ session_id: request.sessionId, trace_id: request.traceId, tool: request.tool })
    if (request.tainted === null) {
      const now = yield* Clock.currentTimeMillis
      const grant = yield* grants.find(
        request.sessionId,
        request.tool,
        request.target,
        now,
        request.exactTarget === true
      )
      if (grant !== undefined) return yield* useGrant(request, grant, now)
    }
    return yield* Effect.acquireUseRelease(
      slots.reserve(request.sessionId),
      (reserved) => (reserved ? ask(request) : overLimit(request)),
      (reserved) => (reserved ? slots.release(request.sessionId) : Effect.void)
    )
  })

  const pending = Effect.sync(() =>
    [...waiting.values()].map((entry) => entry.pending).sort((a, b) => a.expiresAt - b.expiresAt)
  )

  return Approvals.of({ request, pending, answer })
})

/** Approvals over an SqlClient (pending and consumed requests), the channel that asks, and the audit log. */
export const ApprovalsLive = Layer.effect(Approvals, makeApprovals)

/** ApprovalsLive on its own SQLite file, `<workspace>/.state/approvals.sqlite`; the SqlClient stays private. */
export const ApprovalsSqlite = ApprovalsLive.pipe(Compose.provide(ApprovalsStoreLive))
