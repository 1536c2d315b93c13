import { Clock, Effect } from "effect"
import { isoAt } from "../../domain/Time.js"
import { AuditLog } from "../../services/AuditLog.js"
import { Workspace } from "../../services/Workspace.js"

/** The workspace's markdown files: every change the agent makes to them is a `workspace_edit` record. */
const TRACKED = new Set(["SOUL.md", "IDENTITY.md", "USER.md", "MEMORY.md"])

/** `+added -removed` lines, counting lines as a multiset (enough for "what changed, how much"). */
export const diffStat = (before: string, after: string): string => {
  const counts = new Map<string, number>()
  for (const line of before.split("\n")) counts.set(line, (counts.get(line) ?? 0) + 1)
  let added = 0
  for (const line of after.split("\n")) {
    const left = counts.get(line) ?? 0
    if (left > 0) counts.set(line, left - 1)
    else added++
  }
  const removed = [...counts.values()].reduce((total, n) => total + n, 0)
  return `+${added} -${removed}`
}

/**
 * Runs a call and, when it changed one of the workspace's markdown files, appends a `workspace_edit` record
 * (sizes before and after, a diff stat, the trace and the approval that allowed it).
 */
export const recordingEdits = <A extends { readonly result: { readonly status: string } }, R>(
  edit: { readonly traceId: string; readonly target: string; readonly approvalRequestId: string | null },
  run: Effect.Effect<A, never, R>
): Effect.Effect<A, never, R | Workspace | AuditLog> => {
  if (!TRACKED.has(edit.target)) return run
  return Effect.gen(function*() {
    const workspace = yield* Workspace
    const read = workspace.readOptional(edit.target).pipe(Effect.orElseSucceed(() => undefined))
    const before = (yield* read) ?? ""
    const executed = yield* run
    if (executed.result.status !== "success") return executed
    const after = (yield* read) ?? ""
    yield* (yield* AuditLog).append({
      kind: "workspace_edit",
      at: isoAt(yield* Clock.currentTimeMillis),
      file: edit.target,
      author: "agent",
      trace_id: edit.traceId,
      size_before: Buffer.byteLength(before),
      size_after: Buffer.byteLength(after),
      diff_stat: diffStat(before, after),
      approved_by_request_id: edit.approvalRequestId
    }).pipe(
      Effect.catchAll((error) => Effect.logError(`workspace_edit of ${edit.target} not recorded: ${error.message}`))
    )
    return executed
  })
}
