import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { assert, layer } from "@effect/vitest"
import { Array as Arr, Effect, Exit, Fiber, Logger, LogLevel, Option, Ref, TestClock } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { gunzipSync } from "node:zlib"
import type { AuditRecord, AuditRecordOf } from "../../../src/domain/AuditRecord.js"
import { makeAuditLogFile } from "../../../src/layers/audit/AuditLogFile.js"
import { genesisOf, sha256 } from "../../../src/layers/audit/Seal.js"
import { appendAll, AppendError } from "../../../src/layers/files/Append.js"
import { turnsUntil } from "../../support/EventLoop.js"
import {
  appendTraces,
  breaks,
  decision,
  makeDirs,
  monthFile,
  nowIso,
  openLog,
  readLines,
  settle,
  startAt,
  trace,
  verdict
} from "./support.js"

const quiet = Logger.withMinimumLogLevel(LogLevel.None)

layer(NodeContext.layer)("AuditLogFile", (it) => {
  it.scoped("a record is written as its schema decodes it: its fields in the schema's order, undeclared ones dropped", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      const { close, log } = yield* openLog(dirs)
      const at = yield* nowIso
      const { kind, ...rest } = trace(at, 1)
      const record = trace(at, 2) as AuditRecordOf<"trace">
      const withExtra = { ...trace(at, 3), note: "not in the schema" } as unknown as AuditRecord
      const nested = {
        ...trace(at, 4),
        tool_calls: [{ outcome: "success", name: "fs_read", args_summary: "notes.md", extra: 1 }]
      } as unknown as AuditRecord
      for (const each of [{ ...rest, kind } as AuditRecord, record, withExtra, nested]) yield* log.append(each)
      yield* close
      const fields = readLines(monthFile(dirs)).map((line) => Object.keys(JSON.parse(line) as object))
      const expected = [...Object.keys(record), "seq", "prev", "epoch", "sig"]
      assert.deepStrictEqual(fields, [expected, expected, expected, expected])
      const calls = readLines(monthFile(dirs)).map((line) =>
        JSON.stringify((JSON.parse(line) as { tool_calls: unknown }).tool_calls)
      )
      assert.deepStrictEqual(calls, Array(4).fill(JSON.stringify(record.tool_calls)))
    }))

  it.scoped("append then query: newest first, filtered by kind, time and sender, each record sealed", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      const { close, log } = yield* openLog(dirs)
      const t0 = yield* nowIso
      yield* log.append(trace(t0, 1, "telegram:@roberto"))
      yield* TestClock.adjust("1 minute")
      yield* log.append(verdict(yield* nowIso, 2))
      yield* TestClock.adjust("1 minute")
      const t2 = yield* nowIso
      yield* log.append(trace(t2, 3, "cli:owner"))

      const all = yield* log.query({ limit: 10 })
      assert.deepStrictEqual(all.map((r) => r.kind), ["trace", "approval", "trace"])
      assert.deepStrictEqual(all.map((r) => r.at), [t2, all[1]!.at, t0])
      assert.deepStrictEqual(all.map((r) => r.seq), [2, 1, 1], "monthly and approvals chains count separately")
      assert.strictEqual(all[2]!.prev, genesisOf("monthly"))
      assert.strictEqual(all[0]!.prev, sha256(readLines(monthFile(dirs))[0]!))
      assert.match(all[0]!.sig, /^[0-9a-f]{64}$/)

      assert.deepStrictEqual((yield* log.query({ kind: "trace", limit: 10 })).map((r) => r.seq), [2, 1])
      assert.deepStrictEqual((yield* log.query({ sender: "cli:owner", limit: 10 })).map((r) => r.at), [t2])
      assert.deepStrictEqual((yield* log.query({ since: Date.parse(t2), limit: 10 })).map((r) => r.at), [t2])
      assert.deepStrictEqual((yield* log.query({ until: Date.parse(t0), limit: 10 })).map((r) => r.at), [t0])
      assert.strictEqual((yield* log.query({ limit: 1 })).length, 1)
      assert.deepStrictEqual(readLines(NodePath.join(dirs.auditDir, "approvals.jsonl")).length, 1)

      const report = yield* log.verifyIntegrity()
      assert.deepStrictEqual(breaks(report), [])
      assert.isTrue(report.ok)
      assert.strictEqual(report.signatures, "current_epoch")
      yield* Effect.uninterruptible(log.append(trace(t2, 4)))
      assert.strictEqual((yield* Effect.uninterruptible(log.query({ limit: 10 }))).length, 4, "works where turns end")
      yield* close
      assert.include(
        (yield* Effect.flip(log.append(trace(t2, 5)))).message,
        "closed",
        "a closed log refuses, never hangs"
      )
      const reopened = yield* openLog(dirs)
      const after = yield* reopened.log.verifyIntegrity()
      assert.deepStrictEqual(after.problems, [], "closing writes a checkpoint: nothing is left unanchored")
      assert.deepStrictEqual((yield* reopened.log.query({ limit: 10 })).slice(1).map((r) => r.at), all.map((r) => r.at))
    }).pipe(quiet))

  it.scoped("a query reads a line of another field order, or with an undeclared field, as its schema decodes it", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      const { close, log } = yield* openLog(dirs)
      const at = yield* nowIso
      yield* log.append(trace(at, 1))
      yield* close
      const written = JSON.parse(readLines(monthFile(dirs))[0]!) as Record<string, unknown>
      // What another writer (an older version, a hand) may have left: the same record, shaped otherwise.
      const { kind, ...rest } = written
      const reordered = { ...rest, kind, trace_id: "t-2" }
      const extra = { ...written, trace_id: "t-3", note: "not in the schema" }
      NodeFs.appendFileSync(monthFile(dirs), `${JSON.stringify(reordered)}\n${JSON.stringify(extra)}\n`)

      const reopened = yield* openLog(dirs)
      const read = yield* reopened.log.query({ kind: "trace", limit: 10 })
      assert.deepStrictEqual(read.map((record) => record.kind === "trace" ? record.trace_id : ""), [
        "t-3",
        "t-2",
        "t-1"
      ])
      for (const record of read) {
        assert.deepStrictEqual(Object.keys(record), Object.keys(written), "the schema's order, the seal last")
        assert.deepStrictEqual({ ...record, trace_id: "t-1" }, written)
      }
    }).pipe(quiet))

  it.scoped("a record that fails its schema, or has no kind, is refused and nothing is written", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      const { log } = yield* openLog(dirs)
      const bad = { ...trace(yield* nowIso, 1), steps_count: "five" } as unknown as Parameters<typeof log.append>[0]
      const error = yield* Effect.flip(log.append(bad))
      assert.strictEqual(error._tag, "AuditError")
      assert.include(error.message, "invalid trace record")
      const kindless = { at: yield* nowIso } as unknown as Parameters<typeof log.append>[0]
      assert.include((yield* Effect.flip(log.append(kindless))).message, "(no kind)")
      assert.isFalse(NodeFs.existsSync(monthFile(dirs)))
    }).pipe(quiet))

  it.scoped(
    "20 fibers x 1,000 records: 20,000 whole lines, seq 1..20000 in file order, and a clean verify",
    () =>
      Effect.gen(function*() {
        yield* startAt()
        const dirs = yield* makeDirs
        const { close, log } = yield* openLog(dirs)
        const at = yield* nowIso
        yield* Effect.forEach(
          Arr.range(0, 19),
          (fiber) =>
            Effect.forEach(Arr.range(0, 999), (i) => log.append(trace(at, fiber * 1000 + i)), { discard: true }),
          { concurrency: "unbounded", discard: true }
        )
        const text = NodeFs.readFileSync(monthFile(dirs), "utf8")
        assert.isTrue(text.endsWith("\n"))
        const lines = text.slice(0, -1).split("\n")
        assert.strictEqual(lines.length, 20_000)
        const seqs = lines.map((line) => (JSON.parse(line) as { seq: number }).seq)
        assert.deepStrictEqual(seqs, Arr.range(1, 20_000))
        assert.strictEqual(
          new Set(lines.map((line) => (JSON.parse(line) as { trace_id: string }).trace_id)).size,
          20_000
        )
        const report = yield* log.verifyIntegrity()
        assert.deepStrictEqual(breaks(report), [])
        assert.deepStrictEqual(report.files, [{ file: "2026-04.jsonl", records: 20_000 }])
        assert.strictEqual((yield* log.query({ kind: "trace", limit: 25_000 })).length, 20_000)
        yield* close
      }).pipe(quiet),
    { timeout: 120_000 }
  )

  it.scoped("verify and query while appends run: each sees whole lines only, never a torn tail", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      const { log } = yield* openLog(dirs)
      const at = yield* nowIso
      const writers = yield* Effect.fork(Effect.forEach(
        Arr.range(0, 3),
        (fiber) =>
          Effect.forEach(
            Arr.range(0, 499),
            (i) => log.append(i % 4 === 0 ? decision(at, i) : trace(at, fiber * 1000 + i)),
            { discard: true }
          ),
        { concurrency: "unbounded", discard: true }
      ))
      for (let i = 0; i < 10; i++) {
        assert.deepStrictEqual(breaks(yield* log.verifyIntegrity()), [])
        yield* log.query({ limit: 5 })
      }
      yield* writers.await
      assert.strictEqual((yield* log.query({ limit: 5000 })).length, 2000)
      assert.deepStrictEqual(breaks(yield* log.verifyIntegrity()), [])
    }).pipe(quiet))

  it.scoped("fsync batch: appends return before the sync, and the log is whole and verified after close", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      const { close, log } = yield* openLog(dirs, "batch")
      yield* Effect.forEach(Arr.range(0, 499), (i) => Effect.flatMap(nowIso, (at) => log.append(trace(at, i))), {
        concurrency: 8,
        discard: true
      })
      yield* close
      assert.strictEqual(readLines(monthFile(dirs)).length, 500)
      const reopened = yield* openLog(dirs)
      assert.deepStrictEqual((yield* reopened.log.verifyIntegrity()).problems, [])
    }).pipe(quiet))

  it.scoped("checkpoints: after an approval verdict, a denial, every 100 records, at least every 60 s, and when idle", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      const { log } = yield* openLog(dirs)
      const checkpoints = NodePath.join(dirs.keyDir, "audit-checkpoints.jsonl")
      const reasons = () =>
        NodeFs.existsSync(checkpoints)
          ? readLines(checkpoints).map((line) => (JSON.parse(line) as { reason: string }).reason)
          : []
      yield* log.append(trace(yield* nowIso, 1))
      assert.deepStrictEqual(reasons(), [])
      yield* log.append(verdict(yield* nowIso, 2))
      assert.deepStrictEqual(reasons(), ["approval"])
      yield* log.append(decision(yield* nowIso, 3, "allow"))
      assert.deepStrictEqual(reasons(), ["approval"], "an allow is not a checkpoint by itself")
      yield* log.append(decision(yield* nowIso, 4, "deny"))
      assert.deepStrictEqual(reasons(), ["approval", "denial"])
      // A busy log: one record every 240 ms for a minute (never idle long enough to let go of the folder).
      for (let i = 0; i < 255; i++) {
        yield* TestClock.adjust("240 millis")
        yield* log.append(trace(yield* nowIso, 10 + i))
      }
      yield* settle(log)
      assert.deepStrictEqual(reasons(), ["approval", "denial", "count", "count", "interval"])
      // Idle for a moment: the writer anchors what is left and lets the folder go for other processes.
      yield* TestClock.adjust("1 second")
      yield* settle(log)
      assert.deepStrictEqual(reasons().slice(-1), ["close"])
      assert.isFalse(NodeFs.existsSync(NodePath.join(dirs.auditDir, "writer.lock")))
      const last = JSON.parse(readLines(checkpoints).at(-1)!) as {
        heads: ReadonlyArray<{ chain: string; seq: number }>
      }
      assert.deepStrictEqual(last.heads.map((h) => [h.chain, h.seq]).sort(), [["approvals.jsonl", 3], ["monthly", 256]])
      assert.deepStrictEqual((yield* log.verifyIntegrity()).problems, [])
      yield* log.append(trace(yield* nowIso, 1000))
      assert.isTrue(NodeFs.existsSync(NodePath.join(dirs.auditDir, "writer.lock")), "the next append takes it again")
      assert.deepStrictEqual(breaks(yield* log.verifyIntegrity()), [])
    }).pipe(quiet))

  it.scoped("a slow disk holds up no append: the batch sync and the count checkpoint run beside the writer", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      // Every sync of an audit file waits for the gate: a disk that takes its time.
      const fs = yield* FileSystem.FileSystem
      const gate = yield* Effect.makeLatch(false)
      yield* Effect.addFinalizer(() => gate.open)
      let syncsStarted = 0
      const slow: FileSystem.FileSystem = {
        ...fs,
        open: (path, options) =>
          Effect.map(fs.open(path, options), (file) =>
            new Proxy(file, {
              get: (target, key) => {
                if (key === "sync") {
                  return Effect.suspend(() => {
                    syncsStarted++
                    return Effect.zipRight(gate.await, target.sync)
                  })
                }
                const value: unknown = Reflect.get(target, key, target)
                return typeof value === "function" ? value.bind(target) : value
              }
            }))
      }
      const { log } = yield* openLog(dirs, "batch").pipe(Effect.provideService(FileSystem.FileSystem, slow))
      const checkpoints = NodePath.join(dirs.keyDir, "audit-checkpoints.jsonl")
      const lastCheckpoint = () => {
        const last = NodeFs.existsSync(checkpoints) ? readLines(checkpoints).at(-1) : undefined
        return last === undefined
          ? undefined
          : JSON.parse(last) as { reason: string; heads: ReadonlyArray<{ chain: string; seq: number }> }
      }
      const appendedWhileSyncing = Effect.gen(function*() {
        const appending = yield* Effect.fork(log.append(trace(yield* nowIso, 1000 + syncsStarted)))
        yield* turnsUntil(Effect.map(Fiber.poll(appending), Option.isSome), 10_000)
        return Option.isSome(yield* Fiber.poll(appending))
      })

      // The sync 200 ms after a write, under way: the next record is appended all the same.
      yield* log.append(trace(yield* nowIso, 1))
      yield* TestClock.adjust("200 millis")
      yield* turnsUntil(Effect.sync(() => syncsStarted === 1), 10_000)
      assert.strictEqual(syncsStarted, 1)
      assert.isTrue(yield* appendedWhileSyncing, "an append waited for the periodic sync")
      yield* gate.open
      yield* settle(log)

      // The 100th record starts a checkpoint; its sync under way, the 101st is appended all the same, and the
      // checkpoint names the heads of the moment it started.
      yield* gate.close
      yield* appendTraces(log, 98, 2)
      yield* turnsUntil(Effect.sync(() => syncsStarted === 2), 10_000)
      assert.strictEqual(syncsStarted, 2)
      assert.isTrue(yield* appendedWhileSyncing, "an append waited for the count checkpoint")
      assert.isUndefined(lastCheckpoint(), "the checkpoint is written once the files are synced")
      yield* gate.open
      yield* settle(log)
      const written = lastCheckpoint()
      assert.strictEqual(written?.reason, "count")
      assert.deepStrictEqual(written?.heads.map((head) => [head.chain, head.seq]), [["monthly", 100]])
      assert.strictEqual(readLines(monthFile(dirs)).length, 101)
      assert.deepStrictEqual(breaks(yield* log.verifyIntegrity()), [])
    }).pipe(quiet))

  it.scoped("a month rollover on the test clock compresses the old month, and the chain runs on into the new one", () =>
    Effect.gen(function*() {
      yield* startAt(Date.parse("2026-04-30T23:58:00.000Z"))
      const dirs = yield* makeDirs
      const { close, log } = yield* openLog(dirs)
      yield* appendTraces(log, 3)
      const april = readLines(monthFile(dirs))
      yield* TestClock.adjust("3 minutes")
      yield* appendTraces(log, 2, 3)
      const names = NodeFs.readdirSync(dirs.auditDir).filter((n) => n.includes(".jsonl")).sort()
      assert.deepStrictEqual(names, ["2026-04.jsonl.gz", "2026-05.jsonl"])
      const unzipped = gunzipSync(NodeFs.readFileSync(NodePath.join(dirs.auditDir, "2026-04.jsonl.gz"))).toString()
      assert.strictEqual(unzipped, april.map((line) => line + "\n").join(""))
      const may = readLines(monthFile(dirs, "2026-05")).map((line) => JSON.parse(line) as { seq: number; prev: string })
      assert.deepStrictEqual(may.map((r) => r.seq), [4, 5])
      assert.strictEqual(may[0]!.prev, sha256(april[2]!))
      const report = yield* log.verifyIntegrity()
      assert.deepStrictEqual(breaks(report), [])
      assert.deepStrictEqual(report.files, [{ file: "2026-04.jsonl.gz", records: 3 }, {
        file: "2026-05.jsonl",
        records: 2
      }])
      assert.deepStrictEqual((yield* log.query({ limit: 10 })).map((r) => r.seq), [5, 4, 3, 2, 1])
      assert.deepStrictEqual(
        (yield* log.query({ until: Date.parse("2026-04-30T23:59:59.999Z"), limit: 10 })).map((r) => r.seq),
        [3, 2, 1],
        "the archive is queried too"
      )
      yield* close
      const reopened = yield* openLog(dirs)
      yield* appendTraces(reopened.log, 1, 5)
      assert.deepStrictEqual(breaks(yield* reopened.log.verifyIntegrity()), [])
    }).pipe(quiet))

  it.scoped("unaudited traces are found from the month's end, without the query index", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      const { close, log } = yield* openLog(dirs)
      const times: Array<string> = []
      for (let n = 0; n < 5; n++) {
        times.push(yield* nowIso)
        yield* log.append(trace(times[n]!, n))
        yield* log.append(verdict(times[n]!, n))
        yield* TestClock.adjust("1 minute")
      }
      // Within the slack the log tolerates, a record may be a little older than the one before it (a record of
      // another process, written late): reading goes on past it.
      yield* log.append(trace(new Date(Date.parse(times[4]!) - 30_000).toISOString(), 5))
      const missing = (ids: ReadonlyArray<string>, since = Date.parse(times[2]!)) =>
        Effect.map(log.unaudited(new Set(ids), since), (set) => [...set])
      assert.deepStrictEqual(yield* missing(["t-2", "t-3", "t-4", "t-5"]), [])
      assert.deepStrictEqual(yield* missing(["t-2", "t-9", "t-5"]), ["t-9"])
      assert.deepStrictEqual(yield* missing(["t-4"], Date.parse(times[4]!)), [], "found past an older record")
      const indexed = NodeFs.readdirSync(dirs.auditDir).filter((name) => name.startsWith("index.sqlite"))
      assert.deepStrictEqual(indexed, [], "no index is opened")
      yield* close
    }).pipe(quiet))

  it.scoped("unaudited traces whose records may be in an archived month are looked for through the index", () =>
    Effect.gen(function*() {
      yield* startAt(Date.parse("2026-04-30T23:58:00.000Z"))
      const dirs = yield* makeDirs
      const { close, log } = yield* openLog(dirs)
      yield* appendTraces(log, 3)
      yield* TestClock.adjust("3 minutes")
      yield* appendTraces(log, 2, 3)
      assert.isTrue(NodeFs.existsSync(NodePath.join(dirs.auditDir, "2026-04.jsonl.gz")))
      const missing = (ids: ReadonlyArray<string>, since: string) =>
        Effect.map(log.unaudited(new Set(ids), Date.parse(since)), (set) => [...set].sort())
      assert.deepStrictEqual(yield* missing(["t-3", "t-4", "t-7"], "2026-05-01T00:01:00.000Z"), ["t-7"])
      assert.isFalse(NodeFs.existsSync(NodePath.join(dirs.auditDir, "index.sqlite")), "April is not read")
      const april = yield* missing(["t-0", "t-2", "t-4", "t-8"], "2026-04-30T23:58:00.000Z")
      assert.deepStrictEqual(april, ["t-8"])
      assert.isTrue(NodeFs.existsSync(NodePath.join(dirs.auditDir, "index.sqlite")), "the archive, through the index")
      yield* close
    }).pipe(quiet))

  /** A log of 30 traces queried once (so its index exists), closed, and its index files removed. */
  const logWithoutIndex = Effect.gen(function*() {
    yield* startAt()
    const dirs = yield* makeDirs
    const first = yield* openLog(dirs)
    yield* appendTraces(first.log, 30)
    const before = yield* first.log.query({ limit: 100 })
    yield* first.close
    for (const name of NodeFs.readdirSync(dirs.auditDir).filter((n) => n.startsWith("index.sqlite"))) {
      NodeFs.rmSync(NodePath.join(dirs.auditDir, name))
    }
    return { before, dirs }
  })

  it.scoped("the index is only a cache: deleted, it is rebuilt from the files with the same answers", () =>
    Effect.gen(function*() {
      const { before, dirs } = yield* logWithoutIndex
      const second = yield* openLog(dirs)
      assert.deepStrictEqual(yield* second.log.query({ limit: 100 }), before)
      yield* appendTraces(second.log, 1, 30)
      assert.strictEqual((yield* second.log.query({ limit: 100 })).length, 31)
    }).pipe(quiet))

  it.scoped("a corrupt index (not a database) is rebuilt from the files with the same answers", () =>
    Effect.gen(function*() {
      const { before, dirs } = yield* logWithoutIndex
      NodeFs.writeFileSync(
        NodePath.join(dirs.auditDir, "index.sqlite"),
        "this is not a SQLite database, at all. ".repeat(200)
      )
      const second = yield* openLog(dirs)
      assert.deepStrictEqual(yield* second.log.query({ limit: 100 }), before)
    }).pipe(quiet))

  it.scoped("fail closed: a write that fails (ENOSPC) is an AuditError, the side effect never runs, no partial line is left", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      let diskFull = false
      // Half the batch reaches the disk, then the disk is full.
      const appendBytes = (fd: number, bytes: Uint8Array) =>
        diskFull
          ? Effect.zipRight(
            appendAll(fd, bytes.subarray(0, bytes.length >> 1)),
            Effect.fail(new AppendError({ message: "ENOSPC: no space left on device, write" }))
          )
          : appendAll(fd, bytes)
      const log = yield* makeAuditLogFile({
        auditDir: dirs.auditDir,
        keyDir: dirs.keyDir,
        fsync: "always",
        appendBytes
      })
      yield* appendTraces(log, 2)
      diskFull = true
      const sideEffect = yield* Ref.make(false)
      const exit = yield* log.append(decision(yield* nowIso, 9)).pipe(
        Effect.zipRight(Ref.set(sideEffect, true)),
        Effect.exit
      )
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) assert.include(String(exit.cause), "AuditError")
      assert.isFalse(yield* Ref.get(sideEffect), "the call after a failed write-ahead record does not run")
      const error = yield* Effect.flip(log.append(trace(yield* nowIso, 3)))
      assert.include(error.message, "ENOSPC")
      assert.strictEqual(NodeFs.readFileSync(NodePath.join(dirs.auditDir, "approvals.jsonl"), "utf8"), "")
      assert.strictEqual(readLines(monthFile(dirs)).length, 2, "the half-written line was cut back")
      diskFull = false
      yield* appendTraces(log, 1, 3)
      yield* log.append(decision(yield* nowIso, 10))
      assert.deepStrictEqual(breaks(yield* log.verifyIntegrity()), [])
      assert.deepStrictEqual((yield* log.query({ limit: 10 })).map((r) => r.kind), [
        "tool_decision",
        "trace",
        "trace",
        "trace"
      ])
    }).pipe(quiet))

  it.scoped("no secrets: the HMAC key bytes appear in no audit file, archive or index", () =>
    Effect.gen(function*() {
      yield* startAt(Date.parse("2026-04-30T23:00:00.000Z"))
      const dirs = yield* makeDirs
      const { close, log } = yield* openLog(dirs)
      yield* appendTraces(log, 5)
      yield* log.append(verdict(yield* nowIso, 6))
      yield* TestClock.adjust("2 hours")
      yield* appendTraces(log, 5, 10)
      yield* log.query({ limit: 100 })
      yield* close
      const keys = ["audit-key.json", "audit-seed.json"].map((name) =>
        Buffer.from(
          (JSON.parse(NodeFs.readFileSync(NodePath.join(dirs.keyDir, name), "utf8")) as { key: string }).key,
          "hex"
        )
      )
      const files = NodeFs.readdirSync(dirs.auditDir, { recursive: true, encoding: "utf8" })
        .map((name) => NodePath.join(dirs.auditDir, name))
        .filter((path) => NodeFs.statSync(path).isFile())
      assert.isAtLeast(files.length, 4)
      for (const path of files) {
        const raw = NodeFs.readFileSync(path)
        const contents = [raw, path.endsWith(".gz") ? gunzipSync(raw) : raw]
        for (const key of keys) {
          for (const bytes of contents) {
            for (const needle of [key, Buffer.from(key.toString("hex")), Buffer.from(key.toString("base64"))]) {
              assert.strictEqual(bytes.indexOf(needle), -1, `${path} contains a key`)
            }
          }
        }
      }
      assert.strictEqual(NodeFs.statSync(dirs.keyDir).mode & 0o777, 0o700)
      assert.strictEqual(NodeFs.statSync(NodePath.join(dirs.keyDir, "audit-key.json")).mode & 0o777, 0o600)
      assert.strictEqual(NodeFs.statSync(NodePath.join(dirs.keyDir, "audit-seed.json")).mode & 0o777, 0o600)
    }).pipe(quiet))
})
