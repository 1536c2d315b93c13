import { Either } from "effect"
import type { AuditKind } from "../domain/AuditRecord.js"
import { isCalendarDay } from "../domain/Time.js"

// What the command line parser needs of the audit commands, apart from them so that parsing loads no audit log
// and no record schema (building the schemas is milliseconds every command would pay).

/** Every record kind, in the schema's order; the type holds it complete and exact. */
const kinds = {
  trace: true,
  approval: true,
  tool_decision: true,
  workspace_edit: true,
  constitution_modified: true,
  budget_override: true,
  injection_suspected: true,
  recovered: true,
  llm_call: true,
  audit_resumed: true,
  session_forgotten: true,
  secret_changed: true
} satisfies Record<AuditKind, true>

/** The record kinds `--kind` accepts. */
export const auditKinds = Object.keys(kinds) as ReadonlyArray<AuditKind>

export const isAuditKind = (text: string): text is AuditKind => (auditKinds as ReadonlyArray<string>).includes(text)

/**
 * `--since` / `--until`: a day (`2026-04-01`, UTC; `--until` takes the whole day) or an ISO 8601 instant,
 * as epoch milliseconds; Left names what is wrong.
 */
export const parseAuditTime = (text: string, edge: "since" | "until"): Either.Either<number, string> => {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(text)
  const millis = Date.parse(day ? `${text}T00:00:00.000Z` : text)
  if (Number.isNaN(millis) || !/^\d{4}-\d{2}-\d{2}/.test(text)) {
    return Either.left(`--${edge} ${JSON.stringify(text)}: expected a day (2026-04-01) or an ISO 8601 time`)
  }
  // Date.parse rolls a day past the month's end over into the next month (2026-02-30 is March 2nd).
  if (!isCalendarDay(text.slice(0, 10))) {
    return Either.left(`--${edge} ${JSON.stringify(text)}: ${text.slice(0, 10)} is not a day of the calendar`)
  }
  return Either.right(day && edge === "until" ? millis + 86_400_000 - 1 : millis)
}
