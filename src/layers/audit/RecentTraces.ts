import { decodeAuditRecord, isExactSealedRecord } from "../../domain/AuditRecord.js"
import { linesFromEnd } from "../files/LinesFromEnd.js"
import { type AuditFile, joinPath, monthOf } from "./Lines.js"
import { parseLine } from "./Seal.js"
import { MONOTONIC_SLACK_MS } from "./Verify.js"

/** The trace id of a stored line's record, when it is a valid trace record. */
const traceIdOf = (json: Record<string, unknown>): string | undefined => {
  if (json.kind !== "trace") return undefined
  if (isExactSealedRecord(json)) return json.kind === "trace" ? json.trace_id : undefined
  const decoded = decodeAuditRecord(json)
  return decoded._tag === "Right" && decoded.right.kind === "trace" ? decoded.right.trace_id : undefined
}

/**
 * Of the traces `traceIds`, all started at or after `since` (epoch milliseconds), those with no trace record in the
 * monthly files (`months`, oldest first): read from the files' ends, newest records first, until every one is
 * found (what a start usually pays: the records written since the oldest of them) or the records are older than
 * any of theirs can be. A file's records are in time order, give or take the slack the log tolerates. No index is
 * opened or brought up to date. Undefined when a compressed month (an archive, which cannot be read from its end)
 * may hold one of their records: the caller asks the index.
 */
export const unauditedTraces = async (
  auditDir: string,
  months: ReadonlyArray<AuditFile>,
  traceIds: ReadonlySet<string>,
  since: number
): Promise<ReadonlySet<string> | undefined> => {
  const missing = new Set(traceIds)
  const oldest = since - MONOTONIC_SLACK_MS
  const oldestMonth = new Date(oldest).toISOString().slice(0, 7)
  for (let i = months.length - 1; i >= 0 && missing.size > 0; i--) {
    const file = months[i]!
    // A month's file holds the records of that month: one before the oldest's month holds none that recent.
    if ((monthOf(file) ?? "") < oldestMonth) break
    if (file.name.endsWith(".gz")) return undefined
    let reached = false
    await linesFromEnd(joinPath(auditDir, file.name), (bytes) => {
      const json = parseLine(bytes)
      if (json === undefined || typeof json.at !== "string") return true
      if (Date.parse(json.at) < oldest) {
        reached = true
        return false
      }
      const id = traceIdOf(json)
      if (id !== undefined) missing.delete(id)
      return missing.size > 0
    })
    if (reached) break
  }
  return missing
}
