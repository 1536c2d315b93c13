import { Clock, Deferred, Duration, Effect, Layer } from "effect"
import type { ApprovalVia } from "../../domain/ApprovalVia.js"
import { isoAt } from "../../domain/Time.js"
import {
  type AnswerOutcome,
  type ApprovalAnswer,
  type ApprovalDecision,
  type ApprovalRequest,
  Approvals,
  type ApprovalVerdict,
  type PendingApproval
} from "../../services/Approvals.js"
import {
  answeredReason,
  makeSessionSlots,
  MaxPendingPerSession,
  newNonce,
  type Refusal,
  sameSecret,
  targetGlobOf,
  windowOf
} from "./Decisions.js"
import { grantEffectClass, makeGrants } from "./Grants.js"

/**
 * The owner, as a script: asked a request, they decide at once (`true` grants once, `false` denies, or any
 * decision, a window or the session included), or return undefined to answer later through `answer` (or
 * never: the request then expires).
 */
export type ScriptedOwner = (request: ApprovalRequest) => boolean | ApprovalDecision | undefined

type Settled =
  | { readonly _tag: "Answered"; readonly answer: ApprovalAnswer }
  | { readonly _tag: "Timeout" }
  | { readonly _tag: "Interrupted" }

interface Entry {
  readonly pending: PendingApproval
  readonly settled: Deferred.Deferred<Settled>
}

const decisionOf = (said: boolean | ApprovalDecision): ApprovalDecision =>
  said === true ? { _tag: "Once" } : said === false ? { _tag: "Deny" } : said

export const makeApprovalsScripted = (owner: ScriptedOwner, options: { readonly timeoutMs?: number } = {}) =>
  Effect.gen(function*() {
    const timeoutMs = options.timeoutMs ?? 300_000
    const grants = yield* makeGrants
    const slots = makeSessionSlots(MaxPendingPerSession)
    /** Every request asked, settled ones included: an answer to any of them is judged, and counts once. */
    const entries = new Map<string, Entry>()
    const waiting = new Set<string>()
    let asked = 0
    const newRequestId = Effect.sync(() => `ar_scripted_${++asked}`)

    const verdict = (
      request: ApprovalRequest,
      requestId: string | null,
      granted: boolean,
      via: ApprovalVia,
      reason: string
    ): ApprovalVerdict => ({ granted, via, reason, requestId, argsHash: request.argsHash })

    const conclude = (pending: PendingApproval, settled: Settled) =>
      Effect.gen(function*() {
        const { request, requestId } = pending
        if (settled._tag !== "Answered") {
          const reason = settled._tag === "Timeout"
            ? `no answer within ${timeoutMs / 1000} s`
            : "the turn stopped before an answer came"
          return verdict(request, requestId, false, settled._tag === "Timeout" ? "timeout" : "interrupted", reason)
        }
        const { answer } = settled
        const granted = answer.decision._tag !== "Deny"
        const window = granted ? windowOf(answer.decision, yield* Clock.currentTimeMillis) : undefined
        if (window !== undefined) {
          yield* grants.open({
            requestId,
            sessionId: request.sessionId,
            tool: request.tool,
            targetGlob: targetGlobOf(answer.decision),
            target: request.target,
            expiresAt: window
          })
        }
        return verdict(request, requestId, granted, answer.via, answeredReason(request, answer, window))
      })

    const wait = (entry: Entry) =>
      Effect.scoped(Effect.gen(function*() {
        yield* Clock.currentTimeMillis.pipe(
          Effect.flatMap((now) => Effect.sleep(Duration.millis(Math.max(0, entry.pending.expiresAt - now)))),
          Effect.zipRight(Deferred.succeed(entry.settled, { _tag: "Timeout" })),
          Effect.forkScoped
        )
        return yield* Deferred.await(entry.settled)
      }))

    const ask = (request: ApprovalRequest) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          const pending: PendingApproval = {
            requestId: yield* newRequestId,
            nonce: newNonce(),
            expiresAt: (yield* Clock.currentTimeMillis) + timeoutMs,
            request
          }
          const entry: Entry = { pending, settled: yield* Deferred.make<Settled>() }
          entries.set(pending.requestId, entry)
          waiting.add(pending.requestId)
          const said = owner(request)
          if (said !== undefined) {
            const answer: ApprovalAnswer = {
              requestId: pending.requestId,
              nonce: pending.nonce,
              answerer: request.requester,
              decision: decisionOf(said),
              via: "scripted"
            }
            yield* Deferred.succeed(entry.settled, { _tag: "Answered", answer })
          }
          return yield* restore(wait(entry)).pipe(
            Effect.onInterrupt(() => Deferred.succeed(entry.settled, { _tag: "Interrupted" })),
            Effect.flatMap((settled) => conclude(pending, settled)),
            Effect.ensuring(Effect.sync(() => waiting.delete(pending.requestId)))
          )
        })
      )

    const request = (request: ApprovalRequest) =>
      Effect.gen(function*() {
        if (request.tainted === null) {
          const now = yield* Clock.currentTimeMillis
          const grant = yield* grants.find(
            request.sessionId,
            request.tool,
            request.target,
            now,
            request.exactTarget === true
          )
          if (grant !== undefined) {
            const reason = `covered by the grant of ${grantEffectClass(grant)} in ${grant.requestId}` +
              (grant.expiresAt === null ? " for this session" : ` until ${isoAt(grant.expiresAt)}`)
            const via = grant.expiresAt === null ? "session" : "batch"
            return verdict(request, yield* newRequestId, true, via, reason)
          }
        }
        return yield* Effect.acquireUseRelease(
          slots.reserve(request.sessionId),
          (reserved) =>
            reserved ? ask(request) : Effect.succeed(verdict(
              request,
              null,
              false,
              "limit",
              `${MaxPendingPerSession} approval requests already wait for an answer in this session, ` +
                "so this one is denied without asking"
            )),
          (reserved) => (reserved ? slots.release(request.sessionId) : Effect.void)
        )
      })

    const refused = (reason: Refusal): AnswerOutcome => ({ accepted: false, reason })

    /** The owner of the request, with its nonce, before it expires, once. */
    const answer = (answer: ApprovalAnswer) =>
      Effect.gen(function*() {
        const entry = entries.get(answer.requestId)
        if (entry === undefined) return refused("unknown")
        if (answer.answerer !== entry.pending.request.requester) return refused("foreign")
        if (!sameSecret(answer.nonce, entry.pending.nonce)) return refused("nonce_mismatch")
        const done = yield* Deferred.isDone(entry.settled)
        if (!done && (yield* Clock.currentTimeMillis) >= entry.pending.expiresAt) return refused("expired")
        if (yield* Deferred.succeed(entry.settled, { _tag: "Answered", answer })) return { accepted: true } as const
        const first = yield* Deferred.await(entry.settled)
        return refused(first._tag === "Answered" ? "already_answered" : "expired")
      })

    const pending = Effect.sync(() =>
      [...waiting].map((id) => entries.get(id)!.pending).sort((a, b) => a.expiresAt - b.expiresAt)
    )

    return Approvals.of({ request, pending, answer })
  })

/**
 * Approvals in memory with a scripted owner, for tests, demos and embedding programs: the same rules as the
 * live service (a nonce per request, the owner only, before expiry, once; grants for a window or the
 * session; at most a few waiting requests per session), nothing durable and nothing audited.
 */
export const ApprovalsScripted = (owner: ScriptedOwner, options: { readonly timeoutMs?: number } = {}) =>
  Layer.effect(Approvals, makeApprovalsScripted(owner, options))
