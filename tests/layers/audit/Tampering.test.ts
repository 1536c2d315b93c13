import { NodeContext } from "@effect/platform-node"
import { assert, layer } from "@effect/vitest"
import { Effect, Logger, LogLevel, TestClock } from "effect"
import { randomBytes } from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { epochOf } from "../../../src/layers/audit/Keys.js"
import { sealLine, sha256 } from "../../../src/layers/audit/Seal.js"
import type { IntegrityReport } from "../../../src/services/AuditLog.js"
import {
  appendTraces,
  breaks,
  type Dirs,
  makeDirs,
  monthFile,
  nowIso,
  openLog,
  readLines,
  startAt,
  trace,
  writeLines
} from "./support.js"

const quiet = Logger.withMinimumLogLevel(LogLevel.None)
const APRIL = "2026-04.jsonl"

/** Ten traces in April's file, then a clean stop (which anchors seq 10 in a checkpoint). */
const tenRecords = Effect.gen(function*() {
  yield* startAt()
  const dirs = yield* makeDirs
  const { close, log } = yield* openLog(dirs)
  yield* appendTraces(log, 10)
  yield* close
  return dirs
})

const verifyAgain = (dirs: Dirs, seed?: Uint8Array) =>
  Effect.gen(function*() {
    const { close, log } = yield* openLog(dirs)
    const report = yield* log.verifyIntegrity({ seed })
    yield* close
    return report
  })

const only = (report: IntegrityReport, file: string) =>
  report.problems.filter((p) => p.file === file).map((p) => `${p.line} ${p.problem}`)

type Json = Record<string, unknown>

/** What an attacker holding `key` can do: re-seal lines (from `from` on) so that the chain links again. */
const reseal = (lines: ReadonlyArray<string>, from: number, key: Buffer, epochFor: (record: Json) => number) => {
  const out = [...lines]
  for (let i = from; i < out.length; i++) {
    const { epoch: _epoch, prev: _prev, seq, sig: _sig, ...record } = JSON.parse(out[i]!) as Json
    const prev = i === 0 ? (JSON.parse(out[0]!) as Json).prev as string : sha256(out[i - 1]!)
    out[i] = sealLine(record, { seq: seq as number, prev, epoch: epochFor(record) }, key)
  }
  return out
}

const currentKey = (dirs: Dirs) =>
  JSON.parse(NodeFs.readFileSync(NodePath.join(dirs.keyDir, "audit-key.json"), "utf8")) as {
    epoch: number
    key: string
  }

layer(NodeContext.layer)("AuditLogFile tampering", (it) => {
  it.scoped("an untouched log verifies clean, every record anchored", () =>
    Effect.gen(function*() {
      const dirs = yield* tenRecords
      const report = yield* verifyAgain(dirs)
      assert.isTrue(report.ok)
      assert.deepStrictEqual(report.problems, [])
      assert.deepStrictEqual(report.files, [{ file: APRIL, records: 10 }])
    }).pipe(quiet))

  it.scoped("a single changed byte is caught on its line: signature (JSON still valid) or malformed", () =>
    Effect.gen(function*() {
      const dirs = yield* tenRecords
      const lines = readLines(monthFile(dirs))
      writeLines(monthFile(dirs), lines.map((line, i) => i === 3 ? line.replace("request 3", "request 8") : line))
      const signature = yield* verifyAgain(dirs)
      assert.isFalse(signature.ok)
      assert.deepStrictEqual(only(signature, APRIL), ["4 bad_signature", "4 chain_break"])
      writeLines(monthFile(dirs), lines.map((line, i) => i === 6 ? "x" + line.slice(1) : line))
      assert.deepStrictEqual(only(yield* verifyAgain(dirs), APRIL), ["7 malformed", "7 chain_break"])
    }).pipe(quiet))

  it.scoped("a deleted line is caught where the gap is", () =>
    Effect.gen(function*() {
      const dirs = yield* tenRecords
      writeLines(monthFile(dirs), readLines(monthFile(dirs)).filter((_, i) => i !== 3))
      const report = yield* verifyAgain(dirs)
      assert.deepStrictEqual(only(report, APRIL), ["4 chain_break"])
      assert.include(report.problems[0]!.detail, "1 record(s) missing before this line")
    }).pipe(quiet))

  it.scoped("two swapped lines are both caught", () =>
    Effect.gen(function*() {
      const dirs = yield* tenRecords
      const lines = readLines(monthFile(dirs))
      writeLines(monthFile(dirs), [...lines.slice(0, 3), lines[4]!, lines[3]!, ...lines.slice(5)])
      const report = yield* verifyAgain(dirs)
      assert.deepStrictEqual([...new Set(only(report, APRIL))], ["4 chain_break", "5 chain_break"])
    }).pipe(quiet))

  it.scoped("a forged line inserted without the key is caught on its own line", () =>
    Effect.gen(function*() {
      const dirs = yield* tenRecords
      const lines = readLines(monthFile(dirs))
      const { epoch } = currentKey(dirs)
      const { epoch: _e, prev: _p, seq: _s, sig: _g, ...record } = JSON.parse(lines[3]!) as Json
      const forged = sealLine({ ...record, user_message: "transfer everything" }, {
        seq: 5,
        prev: sha256(lines[3]!),
        epoch
      }, randomBytes(32))
      writeLines(monthFile(dirs), [...lines.slice(0, 4), forged, ...lines.slice(4)])
      assert.deepStrictEqual(only(yield* verifyAgain(dirs), APRIL), ["5 bad_signature", "5 chain_break"])

      // Claiming an earlier epoch, whose key verify does not hold without the seed: keys only move forward.
      const older = sealLine({ ...record }, { seq: 5, prev: sha256(lines[3]!), epoch: epoch - 1 }, randomBytes(32))
      writeLines(monthFile(dirs), [...lines.slice(0, 4), older, ...lines.slice(4)])
      const report = yield* verifyAgain(dirs)
      assert.deepStrictEqual(only(report, APRIL), ["5 bad_signature", "5 chain_break"])
      assert.include(
        report.problems[0]!.detail,
        `sealed with the key of epoch ${epoch - 1} after a record of epoch ${epoch}`
      )
      const seeded = yield* verifyAgain(dirs, NodeFs.readFileSync(NodePath.join(dirs.keyDir, "audit-seed.json")))
      assert.include(seeded.problems[0]!.detail, "before the seed's first epoch")
    }).pipe(quiet))

  it.scoped("the last 3 records cut off before the last checkpoint: truncated", () =>
    Effect.gen(function*() {
      const dirs = yield* tenRecords
      writeLines(monthFile(dirs), readLines(monthFile(dirs)).slice(0, 7))
      const report = yield* verifyAgain(dirs)
      assert.isFalse(report.ok)
      assert.deepStrictEqual(breaks(report), [`${APRIL}:0 truncated`])
      assert.include(report.problems[0]!.detail, "3 record(s) were cut off")
    }).pipe(quiet))

  it.scoped("records after the last checkpoint are reported unanchored, which is not a break", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      const { log } = yield* openLog(dirs)
      yield* appendTraces(log, 4)
      const report = yield* log.verifyIntegrity()
      assert.isTrue(report.ok)
      assert.deepStrictEqual(report.problems.map((p) => `${p.file}:${p.line} ${p.problem}`), [`${APRIL}:1 unanchored`])
    }).pipe(quiet))

  it.scoped("a timestamp that goes back is non-monotonic", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      const { close, log } = yield* openLog(dirs)
      yield* appendTraces(log, 2)
      yield* log.append(trace(new Date(Date.parse(yield* nowIso) - 2 * 3_600_000).toISOString(), 2))
      yield* close
      assert.deepStrictEqual(breaks(yield* verifyAgain(dirs)), [`${APRIL}:3 non_monotonic`])
    }).pipe(quiet))

  it.scoped("records re-signed with the stolen current key: caught with the seed, and by their dates", () =>
    Effect.gen(function*() {
      yield* startAt(Date.parse("2026-04-20T10:00:00.000Z"))
      const dirs = yield* makeDirs
      const first = yield* openLog(dirs)
      yield* appendTraces(first.log, 5)
      yield* first.close
      yield* TestClock.setTime(Date.parse("2026-04-22T10:00:00.000Z"))
      const second = yield* openLog(dirs)
      yield* appendTraces(second.log, 3, 5)
      yield* second.close
      const seed = NodeFs.readFileSync(NodePath.join(dirs.keyDir, "audit-seed.json"))
      const stolen = currentKey(dirs)
      assert.strictEqual(
        stolen.epoch,
        epochOf(Date.parse("2026-04-22T10:00:00.000Z")),
        "only the current key is on disk"
      )
      const key = Buffer.from(stolen.key, "hex")

      // The thief rewrites record 2 of the 20th, re-signs it and everything after, and re-signs the checkpoints.
      const original = readLines(monthFile(dirs))
      const edited = original.map((line, i) => i === 1 ? line.replace("request 1", "request X") : line)
      const keepEpochs = reseal(edited, 1, key, (record) => epochOf(Date.parse(record.at as string)))
      writeLines(monthFile(dirs), keepEpochs)
      const checkpoints = NodePath.join(dirs.keyDir, "audit-checkpoints.jsonl")
      const hashes = new Map(keepEpochs.map((line) => [(JSON.parse(line) as { seq: number }).seq, sha256(line)]))
      const forgedCheckpoints: Array<string> = []
      for (const line of readLines(checkpoints)) {
        const { epoch, heads, prev: _p, seq, sig: _s, ...rest } = JSON.parse(line) as Json
        const rehashed = (heads as Array<{ seq: number }>).map((head) => ({ ...head, hash: hashes.get(head.seq) }))
        const prev = forgedCheckpoints.length === 0
          ? (JSON.parse(line) as Json).prev as string
          : sha256(forgedCheckpoints.at(-1)!)
        forgedCheckpoints.push(
          sealLine(
            { ...rest, heads: rehashed },
            { seq: seq as number, prev, epoch: epoch as number },
            key,
            "checkpoint"
          )
        )
      }
      writeLines(checkpoints, forgedCheckpoints)

      const withoutSeed = yield* verifyAgain(dirs)
      assert.strictEqual(withoutSeed.signatures, "current_epoch")
      assert.deepStrictEqual(
        breaks(withoutSeed),
        [],
        "without the seed, earlier days cannot be checked: the report says so"
      )
      const withSeed = yield* verifyAgain(dirs, seed)
      assert.strictEqual(withSeed.signatures, "all_epochs")
      assert.deepStrictEqual(only(withSeed, APRIL), [
        "2 bad_signature",
        "3 bad_signature",
        "4 bad_signature",
        "5 bad_signature"
      ])
      assert.deepStrictEqual(only(withSeed, checkpoints), ["1 bad_signature"])

      // Claiming today's epoch instead: the signatures check out, but records are sealed two days after their date.
      writeLines(monthFile(dirs), reseal(edited, 1, key, () => stolen.epoch))
      const dated = yield* verifyAgain(dirs, seed)
      assert.deepStrictEqual(only(dated, APRIL).slice(0, 4), [
        "2 bad_signature",
        "3 bad_signature",
        "4 bad_signature",
        "5 bad_signature"
      ])
      assert.include(dated.problems.find((p) => p.file === APRIL)!.detail, "days after its date")

      // The untouched log passes every epoch's check with the seed.
      writeLines(monthFile(dirs), original)
      NodeFs.rmSync(checkpoints)
      const clean = yield* verifyAgain(dirs, seed)
      assert.deepStrictEqual(breaks(clean), [])
    }).pipe(quiet))
})
