import type { AuditKind, AuditRecord, SealedRecord } from "./AuditRecord.js"

export interface AuditQuery {
  readonly kind?: AuditKind | undefined
  /** Inclusive, ISO 8601 or epoch milliseconds. */
  readonly since?: number | undefined
  readonly until?: number | undefined
  readonly sender?: string | undefined
  readonly limit: number
}

/** The audit file a record belongs to; traces and other events go to the month's file. */
export const auditFileOf = (record: AuditRecord): string => {
  switch (record.kind) {
    case "approval":
    case "tool_decision":
      return "approvals.jsonl"
    case "workspace_edit":
      return "workspace.jsonl"
    case "constitution_modified":
      return "constitution.jsonl"
    default:
      return `${record.at.slice(0, 7)}.jsonl`
  }
}

/** The query filter, shared by every implementation. */
export const matchesQuery = (query: AuditQuery) => (record: SealedRecord): boolean => {
  if (query.kind !== undefined && record.kind !== query.kind) return false
  const at = Date.parse(record.at)
  if (query.since !== undefined && at < query.since) return false
  if (query.until !== undefined && at > query.until) return false
  if (query.sender !== undefined && (!("sender" in record) || record.sender !== query.sender)) return false
  return true
}
