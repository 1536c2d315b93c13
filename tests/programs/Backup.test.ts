import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Logger, LogLevel } from "effect"
import { execFileSync } from "node:child_process"
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { makeAuditLogFile } from "../../src/layers/audit/AuditLogFile.js"
import { backup, backupName, retention } from "../../src/programs/Backup.js"
import { appendTraces, breaks, decision, nowIso, startAt } from "../layers/audit/support.js"

const DAY = 86_400_000
const nameAt = (iso: string) => backupName(Date.parse(iso))

/** One backup a day at 03:30 UTC for `days` days from `first`. */
const history = (first: string, days: number) =>
  Array.from({ length: days }, (_, i) => backupName(Date.parse(`${first}T03:30:00.000Z`) + i * DAY))

describe("backup retention", () => {
  it("names a backup workspace-YYYYMMDD-HHMM.tar.gz in UTC", () => {
    assert.strictEqual(backupName(Date.parse("2026-04-22T14:03:59.000Z")), "workspace-20260422-1403.tar.gz")
  })

  it("keeps exactly the last 30 daily and the first of each of the last 12 months of a 400-day history", () => {
    const names = history("2025-03-01", 400)
    assert.strictEqual(names.at(-1), "workspace-20260404-0330.tar.gz")
    const { keep, remove } = retention([...names].reverse())
    const daily = history("2026-03-06", 30)
    const monthly = [
      "2025-05-01",
      "2025-06-01",
      "2025-07-01",
      "2025-08-01",
      "2025-09-01",
      "2025-10-01",
      "2025-11-01",
      "2025-12-01",
      "2026-01-01",
      "2026-02-01",
      "2026-03-01",
      "2026-04-01"
    ].map((day) => nameAt(`${day}T03:30:00.000Z`))
    const expected = [...new Set([...monthly, ...daily])].sort()
    assert.strictEqual(expected.length, 41, "2026-04-01 is both a daily and a monthly")
    assert.deepStrictEqual(keep, expected)
    assert.strictEqual(remove.length, 400 - 41)
    assert.deepStrictEqual([...keep, ...remove].sort(), [...names].sort())
    assert.deepStrictEqual(retention(keep).remove, [], "applying it again removes nothing")
  })

  it("keeps the newest backup of a day and the first of a month; other files are never touched", () => {
    const names = [
      nameAt("2026-04-01T03:30:00Z"),
      nameAt("2026-04-01T15:00:00Z"),
      nameAt("2026-04-02T03:30:00Z"),
      "notes.txt",
      "workspace-2026.tar.gz"
    ]
    assert.deepStrictEqual(retention(names), {
      keep: [nameAt("2026-04-01T03:30:00Z"), nameAt("2026-04-01T15:00:00Z"), nameAt("2026-04-02T03:30:00Z")],
      remove: []
    })
    assert.deepStrictEqual(retention(names, { daily: 1, monthly: 1 }).remove, [nameAt("2026-04-01T15:00:00Z")])
  })
})

/** A temporary folder holding a workspace `home` with its SOUL.md, and where its backups go (`backups`, not made). */
const tempWorkspace = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const root = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-backup-" })
  const workspace = NodePath.join(root, "home")
  NodeFs.mkdirSync(workspace)
  NodeFs.writeFileSync(NodePath.join(workspace, "SOUL.md"), "# Soul\n")
  return { root, workspace, dest: NodePath.join(root, "backups") }
})

layer(NodeContext.layer)("backup", (it) => {
  it.scoped("writes a tar.gz that plain tar restores, whose audit log verifies clean, and prunes old backups", () =>
    Effect.gen(function*() {
      yield* startAt()
      const { dest, root, workspace } = yield* tempWorkspace
      const keyDir = NodePath.join(root, "keys")
      const log = yield* makeAuditLogFile({ auditDir: NodePath.join(workspace, ".audit"), keyDir, fsync: "always" })
      yield* appendTraces(log, 12)
      yield* log.append(decision(yield* nowIso, 12, "deny"))
      yield* log.query({ limit: 1 })
      NodeFs.mkdirSync(dest)
      const old = history("2025-01-01", 60)
      for (const name of [...old, "README"]) NodeFs.writeFileSync(NodePath.join(dest, name), "")

      const now = Date.parse("2026-04-22T03:30:00.000Z")
      const result = yield* backup({ workspace, dest, now })
      assert.strictEqual(result.file, NodePath.join(dest, "workspace-20260422-0330.tar.gz"))
      const left = NodeFs.readdirSync(dest).sort()
      assert.deepStrictEqual(left, [...retention([...old, NodePath.basename(result.file)]).keep, "README"].sort())
      assert.strictEqual(result.removed.length, old.length + 1 - (left.length - 1))

      const restored = NodePath.join(root, "restored")
      NodeFs.mkdirSync(restored)
      execFileSync("tar", ["xzf", result.file, "-C", restored])
      const copy = NodePath.join(restored, "home")
      assert.strictEqual(NodeFs.readFileSync(NodePath.join(copy, "SOUL.md"), "utf8"), "# Soul\n")
      const audit = NodeFs.readdirSync(NodePath.join(copy, ".audit")).sort()
      assert.deepStrictEqual(audit, ["2026-04.jsonl", "approvals.jsonl"], "no index, no writer lock")
      const note = NodeFs.readFileSync(NodePath.join(copy, "BACKUP-README.txt"), "utf8")
      assert.include(note, "does not contain:\n- the audit keys")
      assert.include(note, "myclaw audit resume --seed")
      assert.isFalse(NodeFs.readdirSync(dest).some((name) => name.startsWith(".backup-notes-")), "no scratch left")

      const restoredLog = yield* makeAuditLogFile({ auditDir: NodePath.join(copy, ".audit"), keyDir, fsync: "always" })
      const report = yield* restoredLog.verifyIntegrity()
      assert.deepStrictEqual(breaks(report), [])
      assert.isTrue(report.ok)
      assert.strictEqual((yield* restoredLog.query({ limit: 100 })).length, 13)
      const seed = NodeFs.readFileSync(NodePath.join(keyDir, "audit-seed.json"))
      assert.deepStrictEqual(breaks(yield* restoredLog.verifyIntegrity({ seed })), [])
    }).pipe(Logger.withMinimumLogLevel(LogLevel.None)))

  it.scoped("leaves out the temporary files an atomic write left behind when its process died", () =>
    Effect.gen(function*() {
      const { dest, workspace } = yield* tempWorkspace
      for (const dir of [".state", ".audit/traces"]) {
        NodeFs.mkdirSync(NodePath.join(workspace, dir), { recursive: true })
      }
      NodeFs.writeFileSync(NodePath.join(workspace, ".state", "constitution.json"), "{}")
      NodeFs.writeFileSync(NodePath.join(workspace, ".state", "constitution.json.4242.tmp"), "{")
      NodeFs.writeFileSync(NodePath.join(workspace, ".audit", "traces", "recent.json.4242.tmp"), "{")
      NodeFs.mkdirSync(dest)
      const result = yield* backup({ workspace, dest, now: Date.parse("2026-04-22T03:30:00.000Z") })
      const listed = execFileSync("tar", ["tzf", result.file], { encoding: "utf8" }).split("\n")
      assert.include(listed, "home/.state/constitution.json")
      assert.deepStrictEqual(listed.filter((name) => name.endsWith(".tmp")), [])
    }).pipe(Logger.withMinimumLogLevel(LogLevel.None)))

  it.scoped("two backups in the same minute (the daily one and the owner's) each write a whole archive", () =>
    Effect.gen(function*() {
      const { dest, workspace } = yield* tempWorkspace
      // Incompressible, so that compressing it takes long enough for the two to overlap.
      NodeFs.writeFileSync(NodePath.join(workspace, "photo.bin"), NodeCrypto.randomBytes(6 * 1024 * 1024))
      const now = Date.parse("2026-04-22T03:30:00.000Z")
      const results = yield* Effect.all([backup({ workspace, dest, now }), backup({ workspace, dest, now })], {
        concurrency: 2
      })
      assert.deepStrictEqual(results.map((result) => NodePath.basename(result.file)), [
        "workspace-20260422-0330.tar.gz",
        "workspace-20260422-0330.tar.gz"
      ])
      const listed = execFileSync("tar", ["tzf", results[0].file], { encoding: "utf8" }).split("\n")
      assert.includeMembers(listed, ["home/SOUL.md", "home/photo.bin"])
      assert.deepStrictEqual(NodeFs.readdirSync(dest), ["workspace-20260422-0330.tar.gz"], "no partial file left")
    }).pipe(Logger.withMinimumLogLevel(LogLevel.None)))

  it.scoped("refuses a destination inside the workspace", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const root = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-backup-" })
      const error = yield* Effect.flip(backup({ workspace: root, dest: NodePath.join(root, "backups"), now: 0 }))
      assert.strictEqual(error._tag, "BackupError")
      assert.strictEqual(error.reason, "InsideWorkspace")
      assert.isFalse(NodeFs.existsSync(NodePath.join(root, "backups")))
    }))
})
