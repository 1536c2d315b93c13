import { FileSystem } from "@effect/platform"
import { Clock, Console, Effect, Either } from "effect"
import * as NodePath from "node:path"
import type { AuditKind, SealedRecord } from "../domain/AuditRecord.js"
import { cutAt } from "../domain/Text.js"
import { isoAt } from "../domain/Time.js"
import { auditKeyDir } from "../layers/audit/AuditLogFile.js"
import { deriveKey, epochOf, makeKeyStore, parseKeyFile } from "../layers/audit/Keys.js"
import { AuditLog, type IntegrityReport } from "../services/AuditLog.js"
import { Workspace } from "../services/Workspace.js"

export { auditKinds, isAuditKind, parseAuditTime } from "./AuditArgs.js"

const plural = (count: number, word: string) => `${count.toLocaleString("en")} ${word}${count === 1 ? "" : "s"}`

/** The report as the owner reads it. */
export const renderReport = (report: IntegrityReport): string => {
  const records = report.files.reduce((sum, file) => sum + file.records, 0)
  const width = Math.max(0, ...report.files.map((file) => file.file.length))
  const breaks = report.problems.filter((problem) => problem.problem !== "unanchored")
  const notes = report.problems.filter((problem) => problem.problem === "unanchored")
  const lines = [
    `audit log: ${plural(report.files.length, "file")}, ${plural(records, "record")}`,
    ...report.files.map((file) => `  ${file.file.padEnd(width)}  ${plural(file.records, "record")}`),
    report.signatures === "all_epochs"
      ? "signatures: every day's, with keys derived from the seed"
      : "signatures: today's key only (earlier days are covered by the chain and the checkpoints; " +
        "give --seed FILE to check every day's signatures)",
    ...breaks.map((p) => `  ${p.problem.padEnd(13)} ${p.file}${p.line > 0 ? `:${p.line}` : ""}  ${p.detail}`),
    ...notes.map((p) => `  note          ${p.file}:${p.line}  ${p.detail}`),
    breaks.length === 0
      ? "OK: no break found"
      : breaks.every((p) => p.problem === "torn_tail")
      ? `BROKEN: ${plural(breaks.length, "torn last line")} ` +
        "(a crash mid-write, not tampering: myclaw cuts it at its next start)"
      : `BROKEN: ${plural(breaks.length, "problem")}`
  ]
  return lines.join("\n")
}

/** `myclaw audit verify [--seed FILE]`: prints the report; exit 0 when clean, 1 on any break, 2 when it cannot run. */
export const auditVerify = (options: { readonly seedFile?: string | undefined }) =>
  Effect.gen(function*() {
    const log = yield* AuditLog
    const fs = yield* FileSystem.FileSystem
    let seed: Uint8Array | undefined
    if (options.seedFile !== undefined) {
      const read = yield* Effect.either(fs.readFile(options.seedFile))
      if (Either.isLeft(read)) {
        yield* Console.error(`myclaw: cannot read the seed ${options.seedFile}: ${read.left.message}`)
        return 2
      }
      seed = read.right
    }
    const report = yield* Effect.either(log.verifyIntegrity({ seed }))
    if (Either.isLeft(report)) {
      yield* Console.error(`myclaw: audit ${report.left.path}: ${report.left.message}`)
      return 2
    }
    yield* Console.log(renderReport(report.right))
    return report.right.ok ? 0 : 1
  })

/** Problems a restored log may show without being tampered with: its checkpoints were kept with the lost keys. */
const restoreNotes: ReadonlyArray<string> = ["unanchored", "truncated"]

/**
 * `myclaw audit resume --seed FILE`: continues a log whose key is gone (a workspace restored from a backup).
 * The whole log must verify against the owner's seed first; then today's key is derived again from the seed
 * and installed, and an `audit_resumed` record says so. Refused when the key is present (nothing to resume).
 */
export const auditResume = (options: { readonly seedFile: string }) =>
  Effect.gen(function*() {
    const log = yield* AuditLog
    const fs = yield* FileSystem.FileSystem
    const workspace = yield* Workspace
    const read = yield* Effect.either(fs.readFile(options.seedFile))
    if (Either.isLeft(read)) {
      yield* Console.error(`myclaw: cannot read the seed ${options.seedFile}: ${read.left.message}`)
      return 2
    }
    const seed = parseKeyFile(read.right)
    if (Either.isLeft(seed)) {
      yield* Console.error(`myclaw: ${options.seedFile}: ${seed.left}`)
      return 2
    }
    const keys = makeKeyStore(NodePath.resolve(yield* auditKeyDir(workspace.root)))
    const present = yield* Effect.either(keys.load)
    if (Either.isRight(present) && present.right !== undefined) {
      yield* Console.error(
        `myclaw: the audit key is present (${keys.keyFile}): the log can be written, there is nothing to resume`
      )
      return 1
    }
    const report = yield* log.verifyIntegrity({ seed: read.right })
    const breaks = report.problems.filter((problem) => !restoreNotes.includes(problem.problem))
    if (breaks.length > 0) {
      yield* Console.log(renderReport(report))
      yield* Console.error("myclaw: the log does not verify against this seed: not resumed")
      return 1
    }
    const now = yield* Clock.currentTimeMillis
    const key = deriveKey(seed.right, epochOf(now))
    if (key === undefined) {
      yield* Console.error(`myclaw: ${options.seedFile} starts after today: it is not this log's seed`)
      return 2
    }
    yield* keys.restore(key)
    const records = report.files.reduce((sum, file) => sum + file.records, 0)
    yield* log.append({
      kind: "audit_resumed",
      at: isoAt(now),
      sender: "cli",
      seed_epoch: seed.right.epoch,
      key_epoch: key.epoch,
      records_verified: records,
      notes: report.problems.length === 0
        ? "the whole log verified against the seed"
        : report.problems.map((problem) => `${problem.problem} ${problem.file}: ${problem.detail}`).join("; ")
    })
    yield* Console.log(
      `audit log resumed: ${records} records verified against the seed, key of day ${key.epoch} installed in ` +
        `${keys.keyDir}; an audit_resumed record says so. Move ${options.seedFile} off this machine again.`
    )
    return 0
  })

const summaryOf = (record: SealedRecord): string => {
  switch (record.kind) {
    case "trace":
      return `${record.outcome}: ${JSON.stringify(cutAt(record.user_message, 60))}`
    case "approval":
      return `${record.event} ${record.tool_name} ${record.effect_class}` +
        (record.granted === null ? "" : record.granted ? " granted" : " denied")
    case "tool_decision":
      return `${record.decision} ${record.tool_name} ${record.target}`
    case "workspace_edit":
      return `${record.file} ${record.diff_stat} by ${record.author}`
    case "constitution_modified":
      return `${record.hash_before.slice(0, 14)} -> ${record.hash_after.slice(0, 14)}`
    case "budget_override":
      return `until ${record.until}: ${record.reason}`
    case "injection_suspected":
      return `${record.source}: ${record.pattern}`
    case "audit_resumed":
      return `key of day ${record.key_epoch} derived from the seed after ${record.records_verified} records verified`
    case "recovered":
      return `${record.file}: ${record.truncated_bytes} bytes cut`
    case "llm_call":
      return `${record.purpose}: ${record.model} ${record.cost_usd.toFixed(4)} USD`
    case "session_forgotten":
      return `${record.session_id} of ${record.owner}: ${record.turns_deleted} turns deleted`
    case "secret_changed":
      return `${record.name} ${record.action}`
  }
}

/** `myclaw audit query [--kind K] [--since T] [--until T] [--sender S] [--limit N] [--json]`: newest first. */
export const auditQuery = (options: {
  readonly kind?: AuditKind | undefined
  readonly since?: number | undefined
  readonly until?: number | undefined
  readonly sender?: string | undefined
  readonly limit: number
  readonly json: boolean
}) =>
  Effect.gen(function*() {
    const log = yield* AuditLog
    const found = yield* Effect.either(log.query(options))
    if (Either.isLeft(found)) {
      yield* Console.error(`myclaw: audit ${found.left.path}: ${found.left.message}`)
      return 2
    }
    const records = found.right
    if (options.json) {
      for (const record of records) yield* Console.log(JSON.stringify(record))
      return 0
    }
    if (records.length === 0) {
      yield* Console.log("no record matches")
      return 0
    }
    const header = ["at", "kind", "seq", "sender", "summary"] as const
    const rows = records.map((r) =>
      [r.at, r.kind, String(r.seq), "sender" in r ? r.sender : "-", summaryOf(r)] as const
    )
    const widths = [0, 1, 2, 3].map((i) => Math.max(header[i]!.length, ...rows.map((row) => row[i]!.length)))
    const line = (cells: ReadonlyArray<string>) =>
      cells.map((cell, i) => i < 4 ? (i === 2 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)) : cell).join("  ")
    yield* Console.log(line(header))
    for (const row of rows) yield* Console.log(line(row))
    return 0
  })
