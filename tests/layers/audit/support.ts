import { FileSystem } from "@effect/platform"
import { Clock, Effect, Exit, Fiber, Option, Scope, TestClock } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { AuditRecord } from "../../../src/domain/AuditRecord.js"
import { makeAuditLogFile } from "../../../src/layers/audit/AuditLogFile.js"
import type { IntegrityProblem, IntegrityReport } from "../../../src/services/AuditLog.js"

export const APRIL_22 = Date.parse("2026-04-22T10:00:00.000Z")

export interface Dirs {
  readonly root: string
  readonly auditDir: string
  readonly keyDir: string
}

/** A workspace's audit folder and a key directory outside it, in a temp dir removed after the test. */
export const makeDirs = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const root = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-audit-" })
  return { root, auditDir: NodePath.join(root, "ws", ".audit"), keyDir: NodePath.join(root, "keys") } satisfies Dirs
})

/** Sets the test clock first (a schedule forked before it would hang the test), then opens a log; `close` ends it as a stop of myclaw would. */
export const openLog = (dirs: Dirs, fsync: "always" | "batch" = "always") =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const log = yield* makeAuditLogFile({ auditDir: dirs.auditDir, keyDir: dirs.keyDir, fsync }).pipe(
      Scope.extend(scope)
    )
    return { log, close: Scope.close(scope, Exit.void) }
  })

export const startAt = (millis: number = APRIL_22) => TestClock.setTime(millis)

export const nowIso = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())

export const trace = (at: string, n: number, sender = "telegram:@roberto"): AuditRecord => ({
  kind: "trace",
  at,
  trace_id: `t-${n}`,
  session_id: "s-1",
  channel: "telegram",
  sender,
  started_at: at,
  finished_at: at,
  user_message: `request ${n}`,
  final_response: `answer ${n}`,
  steps_count: 2,
  tool_calls: [{ name: "fs_read", args_summary: "notes.md", outcome: "success" }],
  cost_usd: 0.001,
  wall_time_ms: 120,
  outcome: "success",
  approvals_requested: 0,
  approvals_granted: 0
})

export const verdict = (at: string, n: number, granted = true): AuditRecord => ({
  kind: "approval",
  at,
  event: "verdict",
  request_id: `ar-${n}`,
  trace_id: `t-${n}`,
  session_id: "s-1",
  sender: "telegram:@roberto",
  tool_name: "fs_write",
  effect_class: "fs_write:~/downloads/*",
  args_hash: "sha256:00",
  granted,
  via: "explicit"
})

export const decision = (at: string, n: number, value: "allow" | "deny" = "allow"): AuditRecord => ({
  kind: "tool_decision",
  at,
  trace_id: `t-${n}`,
  session_id: "s-1",
  sender: "telegram:@roberto",
  tool_name: "fs_write",
  target: "notes.md",
  args_hash: "sha256:00",
  decision: value,
  rule: "default",
  approval_request_id: null
})

/** Appends `count` traces one after the other, each at the current test time. */
export const appendTraces = (
  log: { readonly append: (r: AuditRecord) => Effect.Effect<void, unknown> },
  count: number,
  from = 0
) =>
  Effect.gen(function*() {
    for (let i = from; i < from + count; i++) yield* log.append(trace(yield* nowIso, i))
  })

export const readLines = (path: string): Array<string> => {
  const text = NodeFs.readFileSync(path, "utf8")
  if (text === "") return []
  return text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n")
}

export const writeLines = (path: string, lines: ReadonlyArray<string>) =>
  NodeFs.writeFileSync(path, lines.map((line) => line + "\n").join(""))

/** The problems that are breaks (everything but unanchored records), as `file:line problem`. */
export const breaks = (report: IntegrityReport): Array<string> =>
  report.problems.filter((p) => p.problem !== "unanchored").map((p: IntegrityProblem) =>
    `${p.file}:${p.line} ${p.problem}`
  )

/** A round trip through the writer's queue (verify asks it for its sizes): what a clock tick queued is done. */
export const settle = (log: { readonly verifyIntegrity: () => Effect.Effect<unknown, unknown> }) =>
  Effect.asVoid(log.verifyIntegrity())

export const monthFile = (dirs: Dirs, month = "2026-04") => NodePath.join(dirs.auditDir, `${month}.jsonl`)

/**
 * Joins a fiber that retries on the test clock against real files (a lock another process holds): the clock
 * steps 25 ms at a time and the event loop turns between steps, so each retry reads the file for real.
 */
export const joinSteppingClock = <A, E>(fiber: Fiber.Fiber<A, E>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 20_000 && Option.isNone(yield* Fiber.poll(fiber)); i++) {
      yield* TestClock.adjust("25 millis")
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
    }
    return yield* Fiber.join(fiber)
  })
