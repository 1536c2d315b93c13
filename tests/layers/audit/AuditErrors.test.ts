import { NodeContext } from "@effect/platform-node"
import { assert, layer } from "@effect/vitest"
import { Effect, Logger, LogLevel } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { makeAuditLogFile } from "../../../src/layers/audit/AuditLogFile.js"
import { makeAuditLogMemory } from "../../../src/layers/audit/AuditLogMemory.js"
import { LOCK_FILE } from "../../../src/layers/audit/WriterLock.js"
import { joinSteppingClock, makeDirs, nowIso, openLog, startAt, trace } from "./support.js"

const quiet = Logger.withMinimumLogLevel(LogLevel.None)

layer(NodeContext.layer)("AuditError reasons", (it) => {
  it.scoped("an append to a closed log fails with reason Closed", () =>
    Effect.gen(function*() {
      yield* startAt()
      const { close, log } = yield* openLog(yield* makeDirs)
      yield* close
      const error = yield* Effect.flip(log.append(trace(yield* nowIso, 1)))
      assert.strictEqual(error.reason, "Closed")
      assert.strictEqual(error.message, "the audit log is closed")
    }).pipe(quiet))

  it.scoped("a record that fails its schema is refused with reason InvalidRecord, file and memory alike", () =>
    Effect.gen(function*() {
      yield* startAt()
      const { log } = yield* openLog(yield* makeDirs)
      const memory = yield* makeAuditLogMemory()
      const bad = { ...trace(yield* nowIso, 1), steps_count: "five" } as unknown as Parameters<typeof log.append>[0]
      const fromFile = yield* Effect.flip(log.append(bad))
      const fromMemory = yield* Effect.flip(memory.append(bad))
      assert.deepStrictEqual([fromFile.reason, fromMemory.reason], ["InvalidRecord", "InvalidRecord"])
      assert.isDefined(fromFile.cause, "the parse error is kept")
    }).pipe(quiet))

  it.scoped("a second writer in the same process fails at once with reason Locked", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      const first = yield* openLog(dirs)
      const second = yield* openLog(dirs)
      yield* first.log.append(trace(yield* nowIso, 1))
      const error = yield* Effect.flip(second.log.append(trace(yield* nowIso, 2)))
      assert.strictEqual(error.reason, "Locked")
      assert.include(error.message, "already open for writing in this process")
    }).pipe(quiet))

  it.scoped("a lock another live process holds for more than 10 s fails with reason Locked", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      const { log } = yield* openLog(dirs)
      NodeFs.writeFileSync(NodePath.join(dirs.auditDir, LOCK_FILE), `${process.ppid}\n`)
      const fiber = yield* Effect.fork(Effect.flip(log.append(trace(yield* nowIso, 1))))
      const error = yield* joinSteppingClock(fiber)
      assert.strictEqual(error.reason, "Locked")
      assert.include(error.message, `process ${process.ppid}`)
    }).pipe(quiet))

  it.scoped("signed records without their key, or with a key file that is not one, fail with reason KeyMissing", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      const first = yield* openLog(dirs)
      yield* first.log.append(trace(yield* nowIso, 1))
      yield* first.close
      const keyFile = NodePath.join(dirs.keyDir, "audit-key.json")
      NodeFs.rmSync(keyFile)
      const missing = yield* openLog(dirs)
      const error = yield* Effect.flip(missing.log.append(trace(yield* nowIso, 2)))
      assert.strictEqual(error.reason, "KeyMissing")
      assert.include(error.message, "the audit key is missing")
      yield* missing.close
      NodeFs.writeFileSync(keyFile, "{}")
      const corrupt = yield* openLog(dirs)
      const invalid = yield* Effect.flip(corrupt.log.append(trace(yield* nowIso, 3)))
      assert.strictEqual(invalid.reason, "KeyMissing")
      assert.include(invalid.message, "invalid audit key")
    }).pipe(quiet))

  it.scoped("a key directory inside the audit folder, or a seed that is not one, fails with reason Misconfigured", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      const inside = yield* Effect.flip(
        makeAuditLogFile({ auditDir: dirs.auditDir, keyDir: NodePath.join(dirs.auditDir, "keys"), fsync: "always" })
      )
      assert.strictEqual(inside.reason, "Misconfigured")
      const { log } = yield* openLog(dirs)
      const seed = yield* Effect.flip(log.verifyIntegrity({ seed: new TextEncoder().encode("not a seed") }))
      assert.strictEqual(seed.reason, "Misconfigured")
    }).pipe(quiet))
})
