import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, layer } from "@effect/vitest"
import { Array as Arr, DateTime, Effect, Logger, LogLevel } from "effect"
import * as NodePath from "node:path"
import { decodeTrace, type ExecutionTrace, traceToJson } from "../../../src/domain/ExecutionTrace.js"
import { makeTraceStoreFile, readTraces } from "../../../src/layers/traces/TraceStoreFile.js"

const makeTrace = (id: string, session: string, startedAt = "2025-03-14T12:00:00.000Z"): ExecutionTrace => ({
  trace_id: id,
  session_id: session,
  channel: "cli:test",
  started_at: DateTime.unsafeMake(startedAt),
  finished_at: DateTime.unsafeMake(startedAt),
  user_message: `question ${id}`,
  steps: [{ kind: "critic", purpose: "quality", input: "x".repeat(2000), verdict: "ok", reason: id }],
  final_response: `answer ${id}`,
  cost_usd: 0,
  wall_time_ms: 1,
  outcome: "success",
  metadata: {}
})

const traceLine = (trace: ExecutionTrace) => traceToJson(trace) + "\n"

const captureLogs = (into: Array<string>) =>
  Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => into.push(String(message))))

const tempDir = Effect.flatMap(FileSystem.FileSystem, (fs) => fs.makeTempDirectoryScoped({ prefix: "myclaw-traces-" }))

const readLines = (file: string) =>
  Effect.map(Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(file)), (text) => {
    assert.isTrue(text.endsWith("\n"), "the file ends with a whole line")
    return text.slice(0, -1).split("\n")
  })

for (const fsync of ["always", "batch"] as const) {
  describe(`TraceStoreFile (fsync: ${fsync})`, () => {
    layer(NodeContext.layer)("persist", (it) => {
      it.scoped("50 concurrent traces make exactly 50 whole, decodable lines", () =>
        Effect.gen(function*() {
          const dir = yield* tempDir
          const store = yield* makeTraceStoreFile(dir, fsync)
          const traces = Arr.makeBy(50, (i) => makeTrace(`t-${i}`, `s-${i % 5}`))
          yield* Effect.forEach(traces, (trace) => store.persist(trace), { concurrency: "unbounded", discard: true })
          const fs = yield* FileSystem.FileSystem
          assert.deepStrictEqual(yield* fs.readDirectory(dir), ["2025-03.jsonl"])
          const lines = yield* readLines(NodePath.join(dir, "2025-03.jsonl"))
          assert.strictEqual(lines.length, 50)
          const decoded = yield* Effect.forEach(lines, (line) => decodeTrace(JSON.parse(line)))
          const ids = decoded.map((trace) => trace.trace_id).sort()
          assert.deepStrictEqual(ids, traces.map((trace) => trace.trace_id).sort())
          assert.strictEqual(new Set(ids).size, 50)
        }))

      it.scoped("a trace goes to the file of the month it started in (UTC)", () =>
        Effect.gen(function*() {
          const dir = yield* tempDir
          const store = yield* makeTraceStoreFile(dir, fsync)
          yield* store.persist(makeTrace("dec", "s", "2024-12-31T23:59:59.999Z"))
          yield* store.persist(makeTrace("jan", "s", "2025-01-01T00:00:00.000Z"))
          yield* store.persist(makeTrace("mar", "s", "2025-03-01T10:00:00.000+02:00"))
          const fs = yield* FileSystem.FileSystem
          const files = (yield* fs.readDirectory(dir)).sort()
          assert.deepStrictEqual(files, ["2024-12.jsonl", "2025-01.jsonl", "2025-03.jsonl"])
          for (const [file, id] of [["2024-12.jsonl", "dec"], ["2025-01.jsonl", "jan"], ["2025-03.jsonl", "mar"]]) {
            const lines = yield* readLines(NodePath.join(dir, file!))
            assert.strictEqual(lines.length, 1)
            assert.strictEqual((yield* decodeTrace(JSON.parse(lines[0]!))).trace_id, id)
          }
        }))

      it.scoped("appends to an existing month file and skips lines that are not traces", () =>
        Effect.gen(function*() {
          const dir = yield* tempDir
          const fs = yield* FileSystem.FileSystem
          const file = NodePath.join(dir, "2025-03.jsonl")
          yield* fs.writeFileString(file, "not json\n{\"trace_id\": 1}\n")
          const store = yield* makeTraceStoreFile(dir, fsync).pipe(Logger.withMinimumLogLevel(LogLevel.None))
          yield* store.persist(makeTrace("t-1", "s"))
          const lines = yield* readLines(file)
          assert.deepStrictEqual(lines.slice(0, 2), ["not json", "{\"trace_id\": 1}"])
          assert.strictEqual(lines.length, 3)
          const reopened = yield* makeTraceStoreFile(dir, fsync).pipe(Logger.withMinimumLogLevel(LogLevel.None))
          assert.deepStrictEqual((yield* reopened.list({ sessionId: "s" })).map((listing) => listing.trace_id), ["t-1"])
        }))

      it.scoped("a torn last line is moved to <month>.jsonl.torn, so the next trace is not glued to it", () =>
        Effect.gen(function*() {
          const dir = yield* tempDir
          const fs = yield* FileSystem.FileSystem
          const file = NodePath.join(dir, "2025-03.jsonl")
          const whole = traceLine(makeTrace("t-0", "s"))
          const fragment = traceLine(makeTrace("t-torn", "s")).slice(0, 1500)
          yield* fs.writeFileString(file, whole + fragment)
          const logs: Array<string> = []
          const store = yield* makeTraceStoreFile(dir, fsync).pipe(Effect.provide(captureLogs(logs)))
          yield* store.persist(makeTrace("t-1", "s")).pipe(Effect.provide(captureLogs(logs)))
          const lines = yield* readLines(file)
          const ids = yield* Effect.forEach(
            lines,
            (line) => Effect.map(decodeTrace(JSON.parse(line)), (t) => t.trace_id)
          )
          assert.deepStrictEqual(ids, ["t-0", "t-1"])
          assert.strictEqual(yield* fs.readFileString(`${file}.torn`), fragment + "\n")
          assert.isTrue(logs.some((line) => line.includes("torn last line (1500 bytes") && line.includes(file)))
          const reopened = yield* makeTraceStoreFile(dir, fsync)
          assert.deepStrictEqual(
            (yield* reopened.list({ sessionId: "s" })).map((listing) => listing.trace_id),
            ["t-0", "t-1"]
          )
        }))

      it.scoped("a file holding only a fragment is cut to nothing", () =>
        Effect.gen(function*() {
          const dir = yield* tempDir
          const fs = yield* FileSystem.FileSystem
          const file = NodePath.join(dir, "2025-03.jsonl")
          yield* fs.writeFileString(file, "{\"trace_id\":\"t-")
          const store = yield* makeTraceStoreFile(dir, fsync).pipe(Logger.withMinimumLogLevel(LogLevel.None))
          yield* store.persist(makeTrace("t-1", "s")).pipe(Logger.withMinimumLogLevel(LogLevel.None))
          assert.strictEqual((yield* readLines(file)).length, 1)
          assert.strictEqual(yield* fs.readFileString(`${file}.torn`), "{\"trace_id\":\"t-\n")
        }))

      it.scoped("persist fails with a TraceStoreError when the file cannot be written", () =>
        Effect.gen(function*() {
          const dir = yield* tempDir
          const fs = yield* FileSystem.FileSystem
          const store = yield* makeTraceStoreFile(dir, fsync)
          yield* fs.makeDirectory(NodePath.join(dir, "2025-03.jsonl"))
          const error = yield* Effect.flip(store.persist(makeTrace("t-1", "s")))
          assert.strictEqual(error._tag, "TraceStoreError")
          assert.strictEqual(error.path, NodePath.join(dir, "2025-03.jsonl"))
          assert.strictEqual(error.reason, "Io")
          assert.include(error.message, "EISDIR")
          yield* store.persist(makeTrace("t-2", "s", "2025-04-01T00:00:00.000Z"))
        }))
    })
  })
}

layer(NodeContext.layer)("readTraces", (it) => {
  it.scoped("a line that is not a trace fails with reason Corrupt and names the line", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const fs = yield* FileSystem.FileSystem
      yield* fs.writeFileString(NodePath.join(dir, "2025-03.jsonl"), "{\"trace_id\": 1}\n")
      const error = yield* Effect.flip(readTraces(dir))
      assert.strictEqual(error.reason, "Corrupt")
      assert.strictEqual(error.path, `${NodePath.join(dir, "2025-03.jsonl")}:1`)
    }))
})
