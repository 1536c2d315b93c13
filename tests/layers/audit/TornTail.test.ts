import { NodeContext } from "@effect/platform-node"
import { assert, it, layer } from "@effect/vitest"
import { Deferred, Effect, Exit, Logger, LogLevel } from "effect"
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { createInterface } from "node:readline"
import type { IntegrityReport } from "../../../src/services/AuditLog.js"
import {
  appendTraces,
  breaks,
  decision,
  type Dirs,
  makeDirs,
  monthFile,
  nowIso,
  openLog,
  readLines,
  startAt,
  trace
} from "./support.js"

const quiet = Logger.withMinimumLogLevel(LogLevel.None)
const APRIL = "2026-04.jsonl"

/** Every break is a torn last line: of the last file of a chain, or of the checkpoint log. */
const onlyTornTails = (report: IntegrityReport, dirs: Dirs) => {
  for (const problem of report.problems) {
    if (problem.problem === "unanchored") continue
    assert.strictEqual(
      problem.problem,
      "torn_tail",
      `${problem.file}:${problem.line} ${problem.problem} ${problem.detail}`
    )
    const path = NodePath.isAbsolute(problem.file) ? problem.file : NodePath.join(dirs.auditDir, problem.file)
    assert.strictEqual(problem.line, readLinesRaw(path).length, "only the last line can be torn")
  }
}

const readLinesRaw = (path: string) => {
  const text = NodeFs.readFileSync(path, "utf8")
  return text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n")
}

layer(NodeContext.layer)("AuditLogFile torn tail", (it) => {
  it.scoped("a torn last line is reported as torn, not tampering, and repaired at the next start with a recovered record", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      const first = yield* openLog(dirs)
      yield* appendTraces(first.log, 5)
      yield* first.close
      const whole = NodeFs.readFileSync(monthFile(dirs))
      const partial = "{\"kind\":\"trace\",\"at\":\"2026-04-22T10:00:00.000Z\",\"trace_id\":\"t-5\",\"sess"
      NodeFs.appendFileSync(monthFile(dirs), partial)

      const second = yield* openLog(dirs)
      const torn = yield* second.log.verifyIntegrity()
      assert.isFalse(torn.ok)
      assert.deepStrictEqual(breaks(torn), [`${APRIL}:6 torn_tail`])
      assert.include(torn.problems[0]!.detail, "no newline")
      assert.strictEqual(
        NodeFs.readFileSync(monthFile(dirs)).length,
        whole.length + partial.length,
        "verify writes nothing"
      )

      yield* second.log.append(decision(yield* nowIso, 6))
      const lines = readLines(monthFile(dirs))
      assert.strictEqual(lines.length, 6)
      assert.strictEqual(
        lines.slice(0, 5).map((l) => l + "\n").join(""),
        whole.toString(),
        "only the partial line was cut"
      )
      const recovered = JSON.parse(lines[5]!) as { kind: string; file: string; truncated_bytes: number; seq: number }
      assert.deepStrictEqual([recovered.kind, recovered.file, recovered.truncated_bytes, recovered.seq], [
        "recovered",
        APRIL,
        partial.length,
        6
      ])
      assert.deepStrictEqual(breaks(yield* second.log.verifyIntegrity()), [])
      assert.strictEqual((yield* second.log.query({ kind: "recovered", limit: 5 })).length, 1)
      yield* second.close
    }).pipe(quiet))

  it.scoped("an unparsable last line (garbage after a crash) is torn too; damage anywhere else is never repaired", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      const first = yield* openLog(dirs)
      yield* first.log.append(decision(yield* nowIso, 1))
      yield* first.log.append(decision(yield* nowIso, 2))
      yield* first.close
      const approvals = NodePath.join(dirs.auditDir, "approvals.jsonl")
      NodeFs.appendFileSync(approvals, "\u0000\u0000\u0000\n")
      const second = yield* openLog(dirs)
      assert.deepStrictEqual(breaks(yield* second.log.verifyIntegrity()), ["approvals.jsonl:3 torn_tail"])
      yield* second.log.append(decision(yield* nowIso, 3))
      assert.strictEqual(readLines(approvals).length, 3)
      const recovered = (yield* second.log.query({ kind: "recovered", limit: 1 }))[0]!
      assert.strictEqual((recovered as { file: string }).file, "approvals.jsonl")
      assert.deepStrictEqual(breaks(yield* second.log.verifyIntegrity()), [])
      yield* second.close

      const lines = readLines(approvals)
      NodeFs.writeFileSync(approvals, [lines[0], "not json", ...lines.slice(1)].map((l) => l + "\n").join(""))
      const third = yield* openLog(dirs)
      yield* third.log.append(decision(yield* nowIso, 4))
      assert.include(NodeFs.readFileSync(approvals, "utf8"), "not json\n", "a damaged middle line is left for verify")
      assert.includeMembers(breaks(yield* third.log.verifyIntegrity()), ["approvals.jsonl:2 malformed"])
      yield* third.close
    }).pipe(quiet))
})

// The child writes on the real clock, so this test runs on it too.
it.live(
  "crash: a writer killed with SIGKILL leaves at most a torn last line, and appends go on cleanly after restart",
  () =>
    Effect.gen(function*() {
      const dirs = yield* makeDirs
      const script = NodePath.resolve("tests/layers/audit/fixtures/crash-writer.ts")
      const durable = yield* Effect.async<number, Error>((resume) => {
        const child = spawn(process.execPath, ["--import", "tsx", script, dirs.auditDir, dirs.keyDir], {
          stdio: ["ignore", "pipe", "pipe"]
        })
        let stderr = ""
        child.stderr.on("data", (chunk) => (stderr += String(chunk)))
        let last = 0
        createInterface({ input: child.stdout }).on("line", (line) => {
          const count = Number(line)
          if (Number.isInteger(count)) last = count
          if (last >= 400 && child.exitCode === null && !child.killed) child.kill("SIGKILL")
        })
        child.on("exit", (_code, signal) =>
          resume(
            signal === "SIGKILL"
              ? Effect.succeed(last)
              : Effect.fail(new Error(`the writer exited on its own: ${stderr}`))
          ))
      })
      const restarted = yield* openLog(dirs)
      const afterCrash = yield* restarted.log.verifyIntegrity()
      onlyTornTails(afterCrash, dirs)
      const records = afterCrash.files.reduce((sum, file) => sum + file.records, 0)
      assert.isAtLeast(records, durable, "every append that returned is in the log")

      yield* appendTraces(restarted.log, 20)
      yield* restarted.log.append(decision(yield* nowIso, 99))
      const afterRestart = yield* restarted.log.verifyIntegrity()
      assert.deepStrictEqual(breaks(afterRestart), [])
      const repaired = afterCrash.problems.filter((p) => p.problem === "torn_tail").length
      assert.strictEqual(
        afterRestart.files.reduce((sum, file) => sum + file.records, 0),
        records + 21 + repaired,
        "the new records, plus one recovered record per torn line cut"
      )
      yield* restarted.close
      const again = yield* openLog(dirs)
      assert.deepStrictEqual((yield* again.log.verifyIntegrity()).problems, [])
      yield* again.close
    }).pipe(Effect.scoped, Effect.provide(NodeContext.layer), quiet),
  { timeout: 60_000 }
)

// Two processes on one audit folder take turns: each holds the folder only while it writes.
it.live(
  "two processes appending at once take turns: every record lands, the chains stay whole",
  () =>
    Effect.gen(function*() {
      const dirs = yield* makeDirs
      const script = NodePath.resolve("tests/layers/audit/fixtures/crash-writer.ts")
      const writing = yield* Deferred.make<void>()
      const child = Effect.async<void, Error>((resume) => {
        const writer = spawn(process.execPath, ["--import", "tsx", script, dirs.auditDir, dirs.keyDir, "1000"], {
          stdio: ["ignore", "pipe", "pipe"]
        })
        let stderr = ""
        writer.stderr.on("data", (chunk) => (stderr += String(chunk)))
        writer.stdout.once("data", () => Deferred.unsafeDone(writing, Exit.void))
        writer.on(
          "exit",
          (code) => resume(code === 0 ? Effect.void : Effect.fail(new Error(`exit ${code}: ${stderr}`)))
        )
      })
      const mine = yield* openLog(dirs)
      // The parent starts once the child is writing, so its first append waits for the child to let go.
      const parent = Effect.zipRight(Deferred.await(writing), appendTraces(mine.log, 200))
      yield* Effect.all([child, parent], { concurrency: "unbounded", discard: true })
      yield* mine.close
      const check = yield* openLog(dirs)
      const report = yield* check.log.verifyIntegrity()
      assert.deepStrictEqual(report.problems, [])
      assert.strictEqual(
        report.files.reduce((sum, file) => sum + file.records, 0),
        1200
      )
      yield* check.close
    }).pipe(Effect.scoped, Effect.provide(NodeContext.layer), quiet),
  { timeout: 60_000 }
)

// A busy writer is never idle; a process that asks for the folder still gets it, after the busy one's batch.
it.live(
  "a process beside a writer that never goes idle still gets its records in: the holder hands over on request",
  () =>
    Effect.gen(function*() {
      const dirs = yield* makeDirs
      const script = NodePath.resolve("tests/layers/audit/fixtures/crash-writer.ts")
      const writing = yield* Deferred.make<void>()
      const writer = yield* Effect.acquireRelease(
        Effect.sync(() =>
          spawn(process.execPath, ["--import", "tsx", script, dirs.auditDir, dirs.keyDir, "-", "batch"], {
            stdio: ["ignore", "pipe", "ignore"]
          })
        ),
        (child) => Effect.sync(() => child.kill("SIGKILL"))
      )
      writer.stdout.on("data", () => Deferred.unsafeDone(writing, Exit.void))
      yield* Deferred.await(writing)
      // Five times a fresh writer (a CLI command) asks for the folder while the other process keeps writing.
      for (let i = 0; i < 5; i++) {
        const mine = yield* openLog(dirs)
        yield* mine.log.append(trace(new Date().toISOString(), 9_000_000 + i))
        yield* mine.close
      }
      writer.kill("SIGKILL")
      yield* Effect.async<void>((resume) => {
        if (writer.exitCode !== null || writer.signalCode !== null) resume(Effect.void)
        else writer.once("exit", () => resume(Effect.void))
      })
      const check = yield* openLog(dirs)
      const report = yield* check.log.verifyIntegrity()
      onlyTornTails(report, dirs)
      const mineFound = yield* check.log.query({ kind: "trace", limit: 100_000 })
      assert.strictEqual(mineFound.filter((r) => r.kind === "trace" && r.trace_id.startsWith("t-900000")).length, 5)
      yield* check.close
    }).pipe(Effect.scoped, Effect.provide(NodeContext.layer), quiet),
  { timeout: 60_000 }
)
