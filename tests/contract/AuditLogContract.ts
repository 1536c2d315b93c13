import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Option, Scope, TestClock } from "effect"
import type { AuditRecord, SealedRecord } from "../../src/domain/AuditRecord.js"
import { AuditLog, type IntegrityReport } from "../../src/services/AuditLog.js"
import { APRIL_22, decision, trace, verdict } from "../layers/audit/support.js"

const MINUTE = 60_000
const isoAt = (millis: number) => new Date(millis).toISOString()

/** A record as it was appended: the seal the log adds (seq, prev, epoch, sig) taken off. */
const unsealed = (record: SealedRecord): AuditRecord => {
  const { epoch: _epoch, prev: _prev, seq: _seq, sig: _sig, ...rest } = record
  return rest as AuditRecord
}

/** The problems that are breaks: everything but records not yet anchored by a checkpoint. */
const breaks = (report: IntegrityReport) =>
  report.problems.filter((problem) => problem.problem !== "unanchored").map((p) => `${p.file}:${p.line} ${p.problem}`)

/**
 * The AuditLog contract: what is appended is queried back newest first, chained per file (the monthly files
 * are one chain), refused when invalid or once the log is closed, and verified. `make` builds a fresh, empty
 * log; the clock is set before it is built.
 */
export const auditLogContract = (name: string, make: () => Layer.Layer<AuditLog, unknown>) =>
  describe(`AuditLog contract: ${name}`, () => {
    /** A log in a scope of its own, so that a test can close it. */
    const open = Effect.gen(function*() {
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(make(), scope)
      return { log: Context.get(context, AuditLog), close: Scope.close(scope, Exit.void) }
    })

    const withLog = <A, E, R>(f: (log: AuditLog["Type"]) => Effect.Effect<A, E, R>) =>
      Effect.gen(function*() {
        yield* TestClock.setTime(APRIL_22)
        const { close, log } = yield* open
        return yield* Effect.ensuring(f(log), close)
      })

    it.scoped("what is appended is queried back whole, newest first, with its place in its chain", () =>
      withLog((log) =>
        Effect.gen(function*() {
          const records = [
            trace(isoAt(APRIL_22), 1),
            verdict(isoAt(APRIL_22 + MINUTE), 2),
            decision(isoAt(APRIL_22 + 2 * MINUTE), 3),
            trace(isoAt(APRIL_22 + 3 * MINUTE), 4, "cli:owner")
          ]
          for (const record of records) yield* log.append(record)
          const all = yield* log.query({ limit: 10 })
          assert.deepStrictEqual(all.map(unsealed), records.slice().reverse())
          assert.deepStrictEqual(
            all.map((r) => r.seq),
            [2, 2, 1, 1],
            "the month's file and approvals.jsonl count apart"
          )
          for (const record of all) assert.isString(record.sig)
          const monthly = all.filter((r) => r.kind === "trace")
          assert.notStrictEqual(monthly[0]!.prev, monthly[1]!.prev, "each record is chained to the one before it")
        })
      ))

    it.scoped("query filters by kind, sender and time (both bounds inclusive) and stops at the limit", () =>
      withLog((log) =>
        Effect.gen(function*() {
          const t = [0, 1, 2, 3].map((n) => APRIL_22 + n * MINUTE)
          yield* log.append(trace(isoAt(t[0]!), 1))
          yield* log.append(verdict(isoAt(t[1]!), 2))
          yield* log.append(trace(isoAt(t[2]!), 3, "cli:owner"))
          yield* log.append(trace(isoAt(t[3]!), 4))
          const ats = (records: ReadonlyArray<SealedRecord>) => records.map((r) => Date.parse(r.at))
          assert.deepStrictEqual(ats(yield* log.query({ kind: "trace", limit: 10 })), [t[3], t[2], t[0]])
          assert.deepStrictEqual(ats(yield* log.query({ kind: "budget_override", limit: 10 })), [])
          assert.deepStrictEqual(ats(yield* log.query({ sender: "cli:owner", limit: 10 })), [t[2]])
          assert.deepStrictEqual(ats(yield* log.query({ sender: "nobody", limit: 10 })), [])
          assert.deepStrictEqual(ats(yield* log.query({ since: t[1], until: t[2], limit: 10 })), [t[2], t[1]])
          assert.deepStrictEqual(ats(yield* log.query({ since: t[3]! + 1, limit: 10 })), [])
          assert.deepStrictEqual(ats(yield* log.query({ kind: "trace", since: t[1], limit: 10 })), [t[3], t[2]])
          assert.deepStrictEqual(ats(yield* log.query({ limit: 1 })), [t[3]], "the limit keeps the newest")
          assert.deepStrictEqual(ats(yield* log.query({ kind: "trace", limit: 2 })), [t[3], t[2]])
          assert.deepStrictEqual(yield* log.query({ limit: 0 }), [])
        })
      ))

    it.scoped("an empty log queries to nothing and verifies", () =>
      withLog((log) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* log.query({ limit: 10 }), [])
          const report = yield* log.verifyIntegrity()
          assert.isTrue(report.ok)
          assert.deepStrictEqual(report.files, [])
          assert.deepStrictEqual(report.problems, [])
        })
      ))

    it.scoped("newest first means latest `at`, even when a record of a concurrent turn is appended late", () =>
      withLog((log) =>
        Effect.gen(function*() {
          yield* log.append(trace(isoAt(APRIL_22 + 30_000), 1))
          yield* log.append(trace(isoAt(APRIL_22), 2))
          const all = yield* log.query({ limit: 10 })
          assert.deepStrictEqual(all.map((r) => r.at), [isoAt(APRIL_22 + 30_000), isoAt(APRIL_22)])
          assert.deepStrictEqual(all.map((r) => r.seq), [1, 2], "the chain keeps the order of the appends")
          assert.deepStrictEqual(breaks(yield* log.verifyIntegrity()), [], "within a minute is not a break")
        })
      ))

    it.scoped("records with the same time come back latest appended first", () =>
      withLog((log) =>
        Effect.gen(function*() {
          for (let n = 1; n <= 3; n++) yield* log.append(trace(isoAt(APRIL_22), n))
          const all = yield* log.query({ limit: 10 })
          assert.deepStrictEqual(all.map((r) => r.seq), [3, 2, 1])
        })
      ))

    it.scoped("the monthly files are one chain: seq goes on into the next month, and a query spans both", () =>
      withLog((log) =>
        Effect.gen(function*() {
          const may = Date.parse("2026-05-01T00:00:00.000Z")
          yield* log.append(trace(isoAt(may - MINUTE), 1))
          yield* TestClock.setTime(may + MINUTE)
          yield* log.append(trace(isoAt(may + MINUTE), 2))
          const all = yield* log.query({ limit: 10 })
          assert.deepStrictEqual(all.map((r) => [r.at, r.seq]), [[isoAt(may + MINUTE), 2], [isoAt(may - MINUTE), 1]])
          const report = yield* log.verifyIntegrity()
          assert.deepStrictEqual(breaks(report), [])
          assert.deepStrictEqual(
            report.files.map((f) => `${f.file.replace(/\.gz$/, "")}:${f.records}`).sort(),
            ["2026-04.jsonl:1", "2026-05.jsonl:1"],
            "a past month may be archived"
          )
        })
      ))

    it.scoped("unaudited: of the traces asked about (started at or after an instant), those with no trace record", () =>
      withLog((log) =>
        Effect.gen(function*() {
          const may = Date.parse("2026-05-01T00:00:00.000Z")
          yield* log.append(trace(isoAt(may - 3 * MINUTE), 1))
          yield* log.append(trace(isoAt(may - 2 * MINUTE), 2))
          yield* log.append(verdict(isoAt(may - 2 * MINUTE), 3))
          yield* log.append(decision(isoAt(may - MINUTE), 4))
          yield* log.append(trace(isoAt(may + MINUTE), 5))
          const missing = (ids: ReadonlyArray<string>, since: number) =>
            Effect.map(log.unaudited(new Set(ids), since), (set) => [...set].sort())
          assert.deepStrictEqual(yield* missing(["t-2", "t-5"], may - 2 * MINUTE), [], "across months")
          assert.deepStrictEqual(yield* missing(["t-1", "t-3", "t-4", "t-5", "t-6"], may - 3 * MINUTE), [
            "t-3",
            "t-4",
            "t-6"
          ], "an approval or a decision is no trace record")
          assert.deepStrictEqual(yield* missing([], may), [])
        })
      ))

    it.scoped("concurrent appends are each written once, and their chain has no gap", () =>
      withLog((log) =>
        Effect.gen(function*() {
          const records = Array.from({ length: 20 }, (_, n) => trace(isoAt(APRIL_22), n))
          yield* Effect.forEach(records, (record) => log.append(record), { concurrency: "unbounded", discard: true })
          const all = yield* log.query({ limit: 100 })
          assert.deepStrictEqual(all.map((r) => r.seq), Array.from({ length: 20 }, (_, i) => 20 - i))
          const ids = all.map((r) => r.kind === "trace" ? r.trace_id : "").sort()
          assert.deepStrictEqual(ids, records.map((r) => r.kind === "trace" ? r.trace_id : "").sort())
          assert.strictEqual(new Set(all.map((r) => r.prev)).size, 20)
        })
      ))

    it.scoped("an invalid record is refused as InvalidRecord and leaves nothing behind", () =>
      withLog((log) =>
        Effect.gen(function*() {
          const at = isoAt(APRIL_22)
          yield* log.append(trace(at, 1))
          const invalid = [
            { ...trace(at, 2), steps_count: "five" },
            { ...trace(at, 3), at: "yesterday" },
            { ...trace(at, 4), kind: "gossip" },
            { at }
          ] as unknown as ReadonlyArray<AuditRecord>
          for (const record of invalid) {
            const error = yield* Effect.flip(log.append(record))
            assert.strictEqual(error._tag, "AuditError")
            assert.strictEqual(error.reason, "InvalidRecord")
          }
          const all = yield* log.query({ limit: 10 })
          assert.deepStrictEqual(all.map(unsealed), [trace(at, 1)])
          yield* log.append(trace(at, 5))
          assert.deepStrictEqual((yield* log.query({ limit: 10 })).map((r) => r.seq), [2, 1], "no seq was used up")
        })
      ))

    it.scoped("a field the record's schema does not know is not kept", () =>
      withLog((log) =>
        Effect.gen(function*() {
          const record = trace(isoAt(APRIL_22), 1)
          yield* log.append({ ...record, api_key: "sk-not-for-the-log" } as unknown as AuditRecord)
          const [stored] = yield* log.query({ limit: 1 })
          assert.deepStrictEqual(unsealed(stored!), record)
          assert.notInclude(JSON.stringify(stored), "sk-not-for-the-log")
        })
      ))

    it.scoped("verification: a log written only through append is whole, counted per file", () =>
      withLog((log) =>
        Effect.gen(function*() {
          yield* log.append(trace(isoAt(APRIL_22), 1))
          yield* log.append(verdict(isoAt(APRIL_22 + MINUTE), 2))
          yield* log.append(trace(isoAt(APRIL_22 + 2 * MINUTE), 3))
          const report = yield* log.verifyIntegrity()
          assert.isTrue(report.ok)
          assert.deepStrictEqual(breaks(report), [])
          assert.deepStrictEqual(
            report.files.map((f) => `${f.file}:${f.records}`).sort(),
            ["2026-04.jsonl:2", "approvals.jsonl:1"]
          )
          assert.strictEqual(report.signatures, "current_epoch", "without the seed only the current key is at hand")
        })
      ))

    it.scoped("verification: a record more than a minute earlier than the one before it in its chain is reported", () =>
      withLog((log) =>
        Effect.gen(function*() {
          yield* log.append(trace(isoAt(APRIL_22 + 5 * MINUTE), 1))
          yield* log.append(verdict(isoAt(APRIL_22), 2))
          yield* log.append(trace(isoAt(APRIL_22), 3))
          const report = yield* log.verifyIntegrity()
          assert.isFalse(report.ok)
          assert.deepStrictEqual(breaks(report), ["2026-04.jsonl:2 non_monotonic"], "other chains keep their own time")
        })
      ))

    it.scoped("a working log is ready and names no failure; an invalid record is not a failure of the log", () =>
      withLog((log) =>
        Effect.gen(function*() {
          assert.isTrue(Option.isNone(yield* log.lastFailure))
          yield* log.ready
          yield* log.append(trace(isoAt(APRIL_22), 1))
          yield* Effect.flip(log.append({ at: isoAt(APRIL_22) } as unknown as AuditRecord))
          assert.isTrue(Option.isNone(yield* log.lastFailure))
          yield* log.ready
        })
      ))

    it.scoped("a closed log refuses appends as Closed, at once (it never hangs), is not ready, and says why", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(APRIL_22)
        const { close, log } = yield* open
        yield* log.append(trace(isoAt(APRIL_22), 1))
        yield* close
        const fiber = yield* Effect.fork(Effect.flip(log.append(trace(isoAt(APRIL_22), 2))))
        yield* TestClock.adjust("1 hour")
        const error = yield* Fiber.join(fiber)
        assert.strictEqual(error.reason, "Closed")
        assert.strictEqual(Option.getOrThrow(yield* log.lastFailure).reason, "Closed")
        assert.strictEqual((yield* Effect.flip(log.ready)).reason, "Closed")
      }))
  })
