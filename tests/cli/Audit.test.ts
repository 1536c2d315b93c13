import { NodeContext } from "@effect/platform-node"
import { assert, layer } from "@effect/vitest"
import { Console, Effect, Either, Layer, Logger, LogLevel } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { auditKinds, auditQuery, auditVerify, parseAuditTime } from "../../src/cli/Audit.js"
import { backupCommand } from "../../src/cli/Backup.js"
import { AppConfig } from "../../src/domain/AppConfig.js"
import { AuditRecord } from "../../src/domain/AuditRecord.js"
import { MyclawConfigFixed } from "../../src/layers/MyclawConfigLive.js"
import { backupDestination } from "../../src/programs/Backup.js"
import { AuditLog } from "../../src/services/AuditLog.js"
import { Workspace } from "../../src/services/Workspace.js"
import {
  appendTraces,
  decision,
  makeDirs,
  monthFile,
  nowIso,
  openLog,
  readLines,
  startAt,
  writeLines
} from "../layers/audit/support.js"

/** Runs a CLI piece with the console captured. */
const captured = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const out: Array<string> = []
    const err: Array<string> = []
    const base = yield* Effect.console
    const console: Console.Console = {
      ...base,
      log: (...args) => Effect.sync(() => void out.push(args.join(" "))),
      error: (...args) => Effect.sync(() => void err.push(args.join(" ")))
    }
    const value = yield* Effect.withConsole(effect, console)
    return { value, out: out.join("\n"), err: err.join("\n") }
  })

layer(NodeContext.layer)("myclaw audit and backup commands", (it) => {
  it.effect("--since and --until take a day (UTC, until the day's end) or an instant; --kind knows every kind", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(
        parseAuditTime("2026-04-01", "since"),
        Either.right(Date.parse("2026-04-01T00:00:00.000Z"))
      )
      assert.deepStrictEqual(
        parseAuditTime("2026-04-01", "until"),
        Either.right(Date.parse("2026-04-01T23:59:59.999Z"))
      )
      assert.deepStrictEqual(
        parseAuditTime("2026-04-01T12:00:00Z", "until"),
        Either.right(Date.parse("2026-04-01T12:00:00Z"))
      )
      assert.isTrue(Either.isLeft(parseAuditTime("yesterday", "since")))
      // Not rolled over into the next month, as Date.parse would.
      for (const text of ["2026-02-30", "2026-02-29T10:00:00Z", "2026-04-31"]) {
        assert.deepStrictEqual(
          parseAuditTime(text, "since"),
          Either.left(`--since ${JSON.stringify(text)}: ${text.slice(0, 10)} is not a day of the calendar`)
        )
      }
      assert.deepStrictEqual(parseAuditTime("2028-02-29", "since"), Either.right(Date.UTC(2028, 1, 29)))
      // The parser's list is written out (it loads no schema): it must be the schema's kinds, in its order.
      assert.deepStrictEqual(auditKinds, AuditRecord.members.map((member) => member.fields.kind.literals[0]))
    }))

  it.scoped("audit verify prints the report, exit 0 when clean, 1 on a break, 2 for an unreadable seed", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      const { close, log } = yield* openLog(dirs)
      yield* appendTraces(log, 3)
      yield* close
      const reopened = yield* openLog(dirs)
      const run = (seedFile?: string) =>
        captured(auditVerify({ seedFile })).pipe(Effect.provideService(AuditLog, reopened.log))
      const clean = yield* run()
      assert.strictEqual(clean.value, 0)
      assert.include(clean.out, "2026-04.jsonl  3 records")
      assert.include(clean.out, "OK: no break found")
      const seeded = yield* run(NodePath.join(dirs.keyDir, "audit-seed.json"))
      assert.strictEqual(seeded.value, 0)
      assert.include(seeded.out, "every day's")
      assert.strictEqual((yield* run(NodePath.join(dirs.root, "missing"))).value, 2)
      writeLines(monthFile(dirs), readLines(monthFile(dirs)).slice(1))
      const broken = yield* run()
      assert.strictEqual(broken.value, 1)
      assert.match(broken.out, /chain_break\s+2026-04\.jsonl:1/)
      assert.include(broken.out, "BROKEN")
    }).pipe(Logger.withMinimumLogLevel(LogLevel.None)))

  it.scoped("audit query prints a table, or one JSON record a line with --json", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      const { log } = yield* openLog(dirs)
      yield* appendTraces(log, 3)
      yield* log.append(decision(yield* nowIso, 9, "deny"))
      const json = yield* captured(auditQuery({ kind: "trace", limit: 2, json: true })).pipe(
        Effect.provideService(AuditLog, log)
      )
      const lines = json.out.split("\n").map((line) => JSON.parse(line) as { kind: string; seq: number })
      assert.deepStrictEqual(lines.map((r) => [r.kind, r.seq]), [["trace", 3], ["trace", 2]])
      const table = yield* captured(auditQuery({ limit: 10, json: false })).pipe(Effect.provideService(AuditLog, log))
      assert.match(table.out.split("\n")[0]!, /^at\s+kind\s+seq\s+sender\s+summary$/)
      assert.include(table.out, "deny fs_write notes.md")
      assert.strictEqual(table.out.split("\n").length, 5)
    }).pipe(Logger.withMinimumLogLevel(LogLevel.None)))

  it.effect("backup goes to --dest, else backup.dest from the configuration's folder, else next to the workspace", () =>
    Effect.sync(() => {
      const base = { configFile: "/etc/myclaw/myclaw.json", workspace: "/home/r/workspace" }
      assert.strictEqual(backupDestination({ ...base, dest: "/mnt/usb", configured: "b" }), "/mnt/usb")
      assert.strictEqual(backupDestination({ ...base, configured: "b" }), "/etc/myclaw/b")
      assert.strictEqual(backupDestination(base), "/home/r/myclaw-backups")
    }))

  it.scoped("backup --dest writes one archive now and prints its path", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      const root = NodePath.join(dirs.root, "ws")
      NodeFs.mkdirSync(root, { recursive: true })
      NodeFs.writeFileSync(NodePath.join(root, "SOUL.md"), "# Soul\n")
      const dest = NodePath.join(dirs.root, "backups")
      const run = yield* captured(backupCommand({ dest })).pipe(
        Effect.provide(Layer.mock(Workspace, { root })),
        Effect.provide(MyclawConfigFixed(AppConfig.make({})))
      )
      assert.strictEqual(run.value, 0)
      assert.strictEqual(run.out, NodePath.join(dest, "workspace-20260422-1000.tar.gz"))
      assert.deepStrictEqual(NodeFs.readdirSync(dest), ["workspace-20260422-1000.tar.gz"])
      const inside = yield* captured(backupCommand({ dest: NodePath.join(root, "b") })).pipe(
        Effect.provide(Layer.mock(Workspace, { root })),
        Effect.provide(MyclawConfigFixed(AppConfig.make({})))
      )
      assert.strictEqual(inside.value, 1)
      assert.include(inside.err, "must be outside the workspace")
    }).pipe(Logger.withMinimumLogLevel(LogLevel.None)))
})
