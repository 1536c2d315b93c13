import { NodeContext } from "@effect/platform-node"
import { assert, layer } from "@effect/vitest"
import { Effect, Logger, LogLevel, TestClock } from "effect"
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { bootId, LOCK_FILE, processStart, WAIT_FILE, WAIT_SPACING_MS } from "../../../src/layers/audit/WriterLock.js"
import { breaks, joinSteppingClock, makeDirs, nowIso, openLog, settle, startAt, trace } from "./support.js"

const quiet = Logger.withMinimumLogLevel(LogLevel.None)

const writeLock = (auditDir: string, holder: object) => {
  NodeFs.mkdirSync(auditDir, { recursive: true })
  NodeFs.writeFileSync(NodePath.join(auditDir, LOCK_FILE), JSON.stringify(holder) + "\n")
}

/** A live process that is not a myclaw writer, killed when the test ends. */
const liveChild = Effect.acquireRelease(
  Effect.sync(() => spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" })),
  (child) => Effect.sync(() => child.kill("SIGKILL"))
).pipe(Effect.map((child) => child.pid!))

layer(NodeContext.layer)("writer lock", (it) => {
  it.scoped("a lock left with this very pid by an earlier run (a container's pid 1 restarting) is taken over", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      writeLock(dirs.auditDir, {
        pid: process.pid,
        start: yield* Effect.promise(() => processStart(process.pid)),
        boot: yield* Effect.promise(bootId),
        token: "left-by-the-previous-run"
      })
      const { log } = yield* openLog(dirs)
      yield* log.append(trace(yield* nowIso, 1))
      const holder = JSON.parse(NodeFs.readFileSync(NodePath.join(dirs.auditDir, LOCK_FILE), "utf8"))
      assert.strictEqual(holder.pid, process.pid)
      assert.notStrictEqual(holder.token, "left-by-the-previous-run")
    }).pipe(quiet))

  it.scoped("an older myclaw's bare-pid lock naming this pid is a leftover too", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      NodeFs.mkdirSync(dirs.auditDir, { recursive: true })
      NodeFs.writeFileSync(NodePath.join(dirs.auditDir, LOCK_FILE), `${process.pid}\n`)
      const { log } = yield* openLog(dirs)
      yield* log.append(trace(yield* nowIso, 1))
    }).pipe(quiet))

  it.scoped("a dead writer's pid now used by another process (other start time, or another boot) is taken over", () =>
    Effect.gen(function*() {
      yield* startAt()
      const pid = yield* liveChild
      const start = yield* Effect.promise(() => processStart(pid))
      const boot = yield* Effect.promise(bootId)
      for (const stale of [{ pid, start: (start ?? 0) + 1, boot }, { pid, start, boot: "another-boot" }]) {
        const dirs = yield* makeDirs
        writeLock(dirs.auditDir, { ...stale, token: "t" })
        const { close, log } = yield* openLog(dirs)
        yield* log.append(trace(yield* nowIso, 1))
        yield* close
      }
    }).pipe(quiet))

  it.scoped("a lock held by a live process with the recorded start time and boot is respected", () =>
    Effect.gen(function*() {
      yield* startAt()
      const pid = yield* liveChild
      const dirs = yield* makeDirs
      writeLock(dirs.auditDir, {
        pid,
        start: yield* Effect.promise(() => processStart(pid)),
        boot: yield* Effect.promise(bootId),
        token: "t"
      })
      const { log } = yield* openLog(dirs)
      const fiber = yield* Effect.fork(Effect.flip(log.append(trace(yield* nowIso, 1))))
      const error = yield* joinSteppingClock(fiber)
      assert.strictEqual(error.reason, "Locked")
      assert.include(error.message, `process ${pid}`)
    }).pipe(quiet))

  it.scoped("a lock that is not a lock at all (garbage after a crash) is taken over", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      NodeFs.mkdirSync(dirs.auditDir, { recursive: true })
      NodeFs.writeFileSync(NodePath.join(dirs.auditDir, LOCK_FILE), "{\"pi")
      const { log } = yield* openLog(dirs)
      yield* log.append(trace(yield* nowIso, 1))
    }).pipe(quiet))

  it.scoped("releasing removes only this holder's lock", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      const { close, log } = yield* openLog(dirs)
      yield* log.append(trace(yield* nowIso, 1))
      const lock = NodePath.join(dirs.auditDir, LOCK_FILE)
      NodeFs.writeFileSync(lock, JSON.stringify({ pid: 1, token: "someone-else" }) + "\n")
      yield* close
      assert.isTrue(NodeFs.existsSync(lock))
    }).pipe(quiet))
})

/** A log that has written one record (so it holds the lock), with the paths of its lock and of a wait request. */
const writingLog = Effect.gen(function*() {
  yield* startAt()
  const dirs = yield* makeDirs
  const { log } = yield* openLog(dirs)
  yield* log.append(trace(yield* nowIso, 1))
  return {
    log,
    lock: NodePath.join(dirs.auditDir, LOCK_FILE),
    wait: NodePath.join(dirs.auditDir, WAIT_FILE)
  }
})

layer(NodeContext.layer)("writer lock handoff", (it) => {
  it.scoped("a writer between batches lets the folder go within its release tick when another process waits", () =>
    Effect.gen(function*() {
      const { lock, log, wait } = yield* writingLog
      yield* TestClock.adjust("200 millis")
      yield* log.append(trace(yield* nowIso, 2))
      assert.isTrue(NodeFs.existsSync(lock))
      // Another process asks for the folder while this one is between batches, not idle yet.
      NodeFs.writeFileSync(wait, "1\n")
      yield* TestClock.adjust("60 millis")
      yield* settle(log)
      assert.isFalse(NodeFs.existsSync(lock), "the folder is let go at the release tick, not only when idle")
      assert.isFalse(NodeFs.existsSync(wait), "the request is consumed")
      yield* log.append(trace(yield* nowIso, 3))
      assert.isTrue(NodeFs.existsSync(lock), "the next append takes it again")
      assert.deepStrictEqual(breaks(yield* log.verifyIntegrity()), [])
    }).pipe(quiet))
})

layer(NodeContext.layer)("writer lock handoff, busy writer", (it) => {
  it.scoped("a busy writer looks for a waiting process once per retry of the waiter, not after every batch", () =>
    Effect.gen(function*() {
      const { lock, log, wait } = yield* writingLog
      NodeFs.writeFileSync(wait, "1\n")
      yield* TestClock.adjust(`${WAIT_SPACING_MS - 1} millis`)
      yield* log.append(trace(yield* nowIso, 2))
      assert.isTrue(NodeFs.existsSync(lock), "within one retry of the waiter the folder is kept")
      assert.isTrue(NodeFs.existsSync(wait), "and the request is not consumed")
      yield* TestClock.adjust("1 millis")
      yield* log.append(trace(yield* nowIso, 3))
      yield* settle(log)
      assert.isFalse(NodeFs.existsSync(lock), "a retry later, the batch hands the folder over")
      assert.isFalse(NodeFs.existsSync(wait), "the request is consumed")
      yield* log.append(trace(yield* nowIso, 4))
      assert.deepStrictEqual(breaks(yield* log.verifyIntegrity()), [])
    }).pipe(quiet))
})
