import { Either } from "effect"
import { type AuditKind, AuditRecord } from "../domain/AuditRecord.js"

// What the command line parser needs of the audit commands, apart from them so that parsing loads no audit log.

/** The record kinds `--kind` accepts, from the record schema itself. */
export const auditKinds: ReadonlyArray<AuditKind> = AuditRecord.members.map((member) => member.fields.kind.literals[0])

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
  return Either.right(day && edge === "until" ? millis + 86_400_000 - 1 : millis)
}
