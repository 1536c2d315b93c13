import { Effect } from "effect"
import { randomBytes, timingSafeEqual } from "node:crypto"
import { answeredVias } from "../../domain/ApprovalVia.js"
import { sha256Hex } from "../../domain/Sha256.js"
import { isoAt } from "../../domain/Time.js"
import {
  type AnswerOutcome,
  type ApprovalAnswer,
  type ApprovalDecision,
  type ApprovalRequest,
  MAX_GRANT_MINUTES
} from "../../services/Approvals.js"
import type { StoredRequest } from "./Store.js"

/** 128 random bits, hex: the capability to answer one request. */
export const newNonce = (): string => randomBytes(16).toString("hex")

export const nonceHash = (nonce: string): string => sha256Hex(nonce)

export const sameSecret = (a: string, b: string): boolean => {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

/**
 * What an accepted answer grants, and for how long; a window of no positive length is a one-off grant, one longer
 * than a day lasts a day.
 */
export const windowOf = (decision: ApprovalDecision, decidedAt: number): number | null | undefined => {
  switch (decision._tag) {
    case "ForMinutes":
      return Number.isFinite(decision.minutes) && decision.minutes > 0
        ? decidedAt + Math.min(decision.minutes, MAX_GRANT_MINUTES) * 60_000
        : undefined
    case "ForSession":
      return null
    default:
      return undefined
  }
}

export const targetGlobOf = (decision: ApprovalDecision): string | null =>
  (decision._tag === "ForMinutes" || decision._tag === "ForSession") && decision.targetGlob !== undefined
    ? decision.targetGlob
    : null

/** The verdict's words for an accepted answer. */
export const answeredReason = (request: ApprovalRequest, answer: ApprovalAnswer, window: number | null | undefined) => {
  if (answer.reason !== undefined) return answer.reason
  if (answer.decision._tag === "Deny") return `denied by ${answer.answerer}`
  const scope = `${request.tool} on ${targetGlobOf(answer.decision) ?? request.target}`
  if (window === undefined) return `approved once by ${answer.answerer}`
  if (window === null) return `approved by ${answer.answerer} for this session (${scope})`
  return `approved by ${answer.answerer} until ${isoAt(window)} (${scope})`
}

export type Refusal = Extract<AnswerOutcome, { readonly accepted: false }>["reason"]

/** An answer to a request of an earlier run, or to one already settled here: only its durable row is left. */
export const judgeStored = (
  row: StoredRequest,
  answer: ApprovalAnswer,
  mayAnswer: (answerer: string, requester: string) => boolean
): Refusal => {
  if (!mayAnswer(answer.answerer, row.requester)) return "foreign"
  if (!sameSecret(nonceHash(answer.nonce), row.nonce_hash)) return "nonce_mismatch"
  return row.state === "consumed" && row.via !== null && answeredVias.has(row.via) ? "already_answered" : "expired"
}

/** Further requests of a session are denied without asking while this many wait for an answer. */
export const MaxPendingPerSession = 5

/** At most `max` requests wait at once in a session; a slot is taken before asking and given back after. */
export const makeSessionSlots = (max: number) => {
  const taken = new Map<string, number>()
  const reserve = (sessionId: string) =>
    Effect.sync(() => {
      const count = taken.get(sessionId) ?? 0
      if (count >= max) return false
      taken.set(sessionId, count + 1)
      return true
    })
  const release = (sessionId: string) =>
    Effect.sync(() => {
      const count = (taken.get(sessionId) ?? 1) - 1
      if (count <= 0) taken.delete(sessionId)
      else taken.set(sessionId, count)
    })
  return { reserve, release } as const
}
