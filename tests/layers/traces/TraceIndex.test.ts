import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, layer } from "@effect/vitest"
import { DateTime, Effect, Option } from "effect"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { type ExecutionTrace, traceToJson } from "../../../src/domain/ExecutionTrace.js"
import { findTrace, listTraces } from "../../../src/layers/traces/TraceIndex.js"
import { makeTraceStoreFile } from "../../../src/layers/traces/TraceStoreFile.js"

const makeTrace = (id: string, session: string, startedAt: string): ExecutionTrace => ({
  trace_id: id,
  session_id: session,
  channel: "cli:test",
  started_at: DateTime.unsafeMake(startedAt),
  finished_at: DateTime.unsafeMake(startedAt),
  user_message: `question ${id} ${"é".repeat(100)}`,
  steps: [],
  final_response: `answer ${id}`,
  cost_usd: 0.5,
  wall_time_ms: 1,
  outcome: "success",
  metadata: {}
})

const tempDir = Effect.flatMap(FileSystem.FileSystem, (fs) => fs.makeTempDirectoryScoped({ prefix: "myclaw-index-" }))

/** The month file `2026-02.jsonl` of `dir`, holding one trace, "a" of session "s": its path. */
const traceAIn = (dir: string) =>
  Effect.promise(async () => {
    const file = NodePath.join(dir, "2026-02.jsonl")
    await NodeFs.writeFile(file, traceToJson(makeTrace("a", "s", "2026-02-01T00:00:00.000Z")) + "\n")
    return file
  })

describe("the trace index", () => {
  layer(NodeContext.layer)("get and list", (it) => {
    it.scoped("a trace is found by id, in any month, and lists filter by session and start", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const store = yield* makeTraceStoreFile(dir, "batch")
        yield* store.persist(makeTrace("a", "s1", "2026-01-31T23:00:00.000Z"))
        yield* store.persist(makeTrace("b", "s2", "2026-02-01T08:00:00.000Z"))
        yield* store.persist(makeTrace("c", "s1", "2026-02-03T08:00:00.000Z"))
        const found = yield* store.get("b")
        assert.isTrue(Option.isSome(found))
        assert.strictEqual(
          Option.getOrThrow(found).user_message,
          makeTrace("b", "s2", "2026-02-01T08:00:00.000Z").user_message
        )
        assert.isTrue(Option.isNone(yield* store.get("nope")))
        assert.deepStrictEqual((yield* store.list({})).map((t) => t.trace_id), ["a", "b", "c"])
        assert.deepStrictEqual((yield* store.list({ sessionId: "s1" })).map((t) => t.trace_id), ["a", "c"])
        const since = Date.parse("2026-02-01T00:00:00.000Z")
        assert.deepStrictEqual((yield* store.list({ since })).map((t) => t.trace_id), ["b", "c"])
        assert.deepStrictEqual((yield* store.list({ limit: 1 })).map((t) => t.trace_id), ["c"])
        assert.strictEqual((yield* store.list({}))[0]!.user_message.length, 81)
      }))

    it.scoped("traces appended after indexing are found; the index covers only what it read", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const file = yield* traceAIn(dir)
        assert.deepStrictEqual((yield* listTraces(dir)).traces.map((t) => t.trace_id), ["a"])
        const indexText = yield* Effect.promise(() =>
          NodeFs.readFile(NodePath.join(dir, "index", "2026-02.idx"), "utf8")
        )
        assert.include(indexText, "\"trace_id\":\"a\"")
        // A line being written (no newline yet) is not indexed; once whole, it is.
        const line = traceToJson(makeTrace("b", "s", "2026-02-02T00:00:00.000Z"))
        yield* Effect.promise(() => NodeFs.appendFile(file, "not a trace\n" + line.slice(0, 50)))
        assert.deepStrictEqual((yield* listTraces(dir)).traces.map((t) => t.trace_id), ["a"])
        yield* Effect.promise(() => NodeFs.appendFile(file, line.slice(50) + "\n"))
        const listed = yield* listTraces(dir)
        assert.deepStrictEqual(listed.traces.map((t) => t.trace_id), ["a", "b"])
        assert.strictEqual(listed.skipped, 1)
        assert.strictEqual((yield* findTrace(dir, "b"))?.trace_id, "b")
      }))

    it.scoped("a file that shrank (its torn tail moved aside) is indexed again from its start", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const file = NodePath.join(dir, "2026-02.jsonl")
        const first = traceToJson(makeTrace("a", "s", "2026-02-01T00:00:00.000Z")) + "\n"
        yield* Effect.promise(() =>
          NodeFs.writeFile(file, first + traceToJson(makeTrace("b", "s", "2026-02-02T00:00:00.000Z")) + "\n")
        )
        assert.strictEqual((yield* listTraces(dir)).traces.length, 2)
        yield* Effect.promise(() => NodeFs.truncate(file, Buffer.byteLength(first)))
        assert.deepStrictEqual((yield* listTraces(dir)).traces.map((t) => t.trace_id), ["a"])
        assert.isUndefined(yield* findTrace(dir, "b"))
      }))

    it.scoped("a line changed under the index is reported as corrupt, naming the file", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const file = NodePath.join(dir, "2026-02.jsonl")
        const line = traceToJson(makeTrace("a", "s", "2026-02-01T00:00:00.000Z"))
        yield* Effect.promise(() => NodeFs.writeFile(file, line + "\n"))
        yield* listTraces(dir)
        yield* Effect.promise(() => NodeFs.writeFile(file, "x".repeat(Buffer.byteLength(line)) + "\n"))
        const error = yield* Effect.flip(findTrace(dir, "a"))
        assert.strictEqual(error.reason, "Corrupt")
        assert.include(error.path, "2026-02.jsonl")
      }))

    it.scoped("a list with a limit reads the newest months only: the older ones are neither read nor indexed", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const store = yield* makeTraceStoreFile(dir, "batch")
        yield* store.persist(makeTrace("old", "s", "2026-01-10T00:00:00.000Z"))
        yield* store.persist(makeTrace("a", "s", "2026-02-01T00:00:00.000Z"))
        yield* store.persist(makeTrace("b", "s", "2026-02-02T00:00:00.000Z"))
        const indexed = (month: string) =>
          Effect.promise(() => NodeFs.access(NodePath.join(dir, "index", `${month}.idx`)).then(() => true, () => false))
        assert.deepStrictEqual((yield* store.list({ sessionId: "s", limit: 2 })).map((t) => t.trace_id), ["a", "b"])
        assert.isTrue(yield* indexed("2026-02"))
        assert.isFalse(yield* indexed("2026-01"))
        // One more than the newest month holds: the month before is read for it, oldest first as always.
        assert.deepStrictEqual((yield* store.list({ sessionId: "s", limit: 3 })).map((t) => t.trace_id), [
          "old",
          "a",
          "b"
        ])
        assert.deepStrictEqual((yield* store.list({ limit: 3 })).map((t) => t.trace_id), ["old", "a", "b"])
        assert.deepStrictEqual((yield* store.list({ limit: 0 })).map((t) => t.trace_id), [])
      }))

    it.scoped("the newest traces are read from the files' ends, as the index lists them, and no index is made", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const big = (id: string, day: string, size: number): ExecutionTrace => ({
          ...makeTrace(id, "s", `2026-02-${day}T00:00:00.000Z`),
          user_message: `${id} ${"é".repeat(size)}`
        })
        // Lines of many sizes (the largest longer than what one read of the end takes), a line that is not a
        // trace among them, a month before, and a last line still being written.
        const lines = Array.from({ length: 90 }, (_, i) => traceToJson(big(`t${i}`, "02", (i * 997) % 40_000)))
        lines.splice(45, 0, "not a trace")
        yield* Effect.promise(() =>
          NodeFs.writeFile(
            NodePath.join(dir, "2026-01.jsonl"),
            traceToJson(makeTrace("jan", "s", "2026-01-05T00:00:00.000Z")) + "\n"
          )
        )
        const file = NodePath.join(dir, "2026-02.jsonl")
        yield* Effect.promise(() =>
          NodeFs.writeFile(file, lines.join("\n") + "\n" + traceToJson(big("partial", "03", 5)).slice(0, 99))
        )
        const newest = yield* listTraces(dir, { limit: 3 })
        assert.deepStrictEqual(newest.traces.map((t) => t.trace_id), ["t87", "t88", "t89"])
        assert.isFalse(
          yield* Effect.promise(() => NodeFs.access(NodePath.join(dir, "index")).then(() => true, () => false))
        )
        const all = yield* listTraces(dir, { limit: 1000 })
        assert.strictEqual(all.skipped, 1)
        // The index's listings (a session filter reads them), offsets and lengths included.
        const indexed = yield* listTraces(dir, { sessionId: "s" })
        assert.strictEqual(indexed.traces.length, 91)
        assert.deepStrictEqual(all.traces, indexed.traces)
        assert.deepStrictEqual((yield* listTraces(dir, { limit: 91 })).traces, indexed.traces)
        assert.deepStrictEqual((yield* listTraces(dir, { limit: 90 })).traces, indexed.traces.slice(1))
        for (const listing of newest.traces) {
          assert.strictEqual((yield* findTrace(dir, listing.trace_id))?.trace_id, listing.trace_id)
        }
      }))

    it.scoped("an index that is not one (damaged, or a listing of the wrong shape) is made again from the traces", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        yield* traceAIn(dir)
        assert.deepStrictEqual((yield* listTraces(dir)).traces.map((t) => t.trace_id), ["a"])
        const indexPath = NodePath.join(dir, "index", "2026-02.idx")
        const index = JSON.parse(yield* Effect.promise(() => NodeFs.readFile(indexPath, "utf8")))
        const damaged = [
          "{not json",
          JSON.stringify({ ...index, traces: [{ ...index.traces[0], offset: "0" }] }),
          JSON.stringify({ ...index, traces: [{ ...index.traces[0], outcome: "won" }] }),
          JSON.stringify({ ...index, covered: null })
        ]
        for (const text of damaged) {
          yield* Effect.promise(() => NodeFs.writeFile(indexPath, text))
          const listed = yield* listTraces(dir)
          assert.deepStrictEqual(listed.traces.map((t) => t.trace_id), ["a"], text)
          assert.strictEqual(listed.traces[0]!.offset, 0, text)
          assert.deepStrictEqual(
            JSON.parse(yield* Effect.promise(() => NodeFs.readFile(indexPath, "utf8"))),
            index,
            text
          )
        }
      }))

    it.scoped("a line is listed by its listing's fields; a trace damaged elsewhere is corrupt when read", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const file = NodePath.join(dir, "2026-02.jsonl")
        const damaged = { ...JSON.parse(traceToJson(makeTrace("d", "s", "2026-02-01T00:00:00.000Z"))), metadata: 7 }
        const lines = [
          JSON.stringify(damaged),
          JSON.stringify({ ...damaged, trace_id: "no-start", started_at: "yesterday" }),
          traceToJson(makeTrace("a", "s", "2026-02-02T00:00:00.000Z"))
        ]
        yield* Effect.promise(() => NodeFs.writeFile(file, lines.join("\n") + "\n"))
        const listed = yield* listTraces(dir)
        assert.deepStrictEqual(listed.traces.map((t) => t.trace_id), ["d", "a"])
        assert.strictEqual(listed.skipped, 1)
        const error = yield* Effect.flip(findTrace(dir, "d"))
        assert.strictEqual(error.reason, "Corrupt")
        assert.include(error.path, "2026-02.jsonl@0")
        assert.strictEqual((yield* findTrace(dir, "a"))?.trace_id, "a")
      }))

    it.scoped("an empty or missing folder lists nothing", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        assert.deepStrictEqual((yield* listTraces(NodePath.join(dir, "none"))).traces, [])
        assert.isUndefined(yield* findTrace(dir, "x"))
      }))
  })
})
