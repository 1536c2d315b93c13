import type { ApprovalRecordVia } from "../../domain/ApprovalVia.js"
import type { ApprovalRecord as ApprovalRecordSchema } from "../../domain/AuditRecord.js"
import { isoAt } from "../../domain/Time.js"
import type { ApprovalRequest } from "../../services/Approvals.js"
import type { StoredRequest } from "./Store.js"

export type ApprovalRecord = typeof ApprovalRecordSchema.Type

/** Who and what an approval record is about. */
export interface Subject {
  readonly trace_id: string
  readonly session_id: string
  readonly sender: string
  readonly tool_name: string
  readonly effect_class: string
  readonly args_hash: string
}

export const subjectOfRequest = (request: ApprovalRequest): Subject => ({
  trace_id: request.traceId,
  session_id: request.sessionId,
  sender: request.requester,
  tool_name: request.tool,
  effect_class: request.effectClass,
  args_hash: request.argsHash
})

export const subjectOfStored = (row: StoredRequest): Subject => ({
  trace_id: row.trace_id,
  session_id: row.session_id,
  sender: row.requester,
  tool_name: row.tool,
  effect_class: row.effect_class,
  args_hash: row.args_hash
})

/** An answer to a request nobody knows: only its sender is known. */
export const unknownSubject = (sender: string): Subject => ({
  trace_id: "",
  session_id: "",
  sender,
  tool_name: "",
  effect_class: "",
  args_hash: ""
})

export const approvalRecord = (
  at: number,
  event: ApprovalRecord["event"],
  requestId: string,
  subject: Subject,
  outcome: {
    readonly granted: boolean | null
    readonly via: ApprovalRecordVia
    readonly reason: string
    readonly batchWindowExpiresAt?: number | null | undefined
  }
): ApprovalRecord => ({
  kind: "approval",
  at: isoAt(at),
  event,
  request_id: requestId,
  ...subject,
  granted: outcome.granted,
  via: outcome.via,
  reason: outcome.reason,
  ...(outcome.batchWindowExpiresAt === undefined
    ? {}
    : { batch_window_expires_at: outcome.batchWindowExpiresAt === null ? null : isoAt(outcome.batchWindowExpiresAt) })
})

/** The question's reason as the audit keeps it: the policy's reason, and the untrusted sources it follows. */
export const requestReason = (request: ApprovalRequest): string =>
  request.tainted === null
    ? request.reason
    : `${request.reason}; follows untrusted content from: ${request.tainted.sources.join(", ")}`
