import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, layer } from "@effect/vitest"
import { DateTime, Effect, Option } from "effect"
import * as NodePath from "node:path"
import type { ExecutionTrace } from "../../../src/domain/ExecutionTrace.js"
import { ASIDE_BYTES, BLOBS_DIR } from "../../../src/layers/traces/Blobs.js"
import { makeTraceStoreFile } from "../../../src/layers/traces/TraceStoreFile.js"

/** A trace whose one action read `content`, as `fs_read` of a large file would. */
const traceReading = (id: string, content: string): ExecutionTrace => ({
  trace_id: id,
  session_id: "s",
  channel: "cli:test",
  started_at: DateTime.unsafeMake("2025-03-14T12:00:00.000Z"),
  finished_at: DateTime.unsafeMake("2025-03-14T12:00:01.000Z"),
  user_message: "read the big file",
  steps: [{
    kind: "action",
    tool_call_id: "c1",
    tool_name: "fs_read",
    args: { path: "big.txt" },
    validation: "ok",
    validation_error: null,
    policy_decision: "allow",
    policy_reason: null,
    approval: null,
    exec_result: { status: "success", content, source: "file:big.txt" },
    error: null,
    wall_ms: 3
  }],
  final_response: "done",
  cost_usd: 0,
  wall_time_ms: 1000,
  outcome: "success",
  metadata: {}
})

const tempDir = Effect.flatMap(FileSystem.FileSystem, (fs) => fs.makeTempDirectoryScoped({ prefix: "myclaw-blobs-" }))

describe("large tool results in traces", () => {
  layer(NodeContext.layer)("TraceStoreFile", (it) => {
    it.scoped("a 1 MB result is stored once aside, the trace line stays small, and get returns it whole", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* tempDir
        const store = yield* makeTraceStoreFile(dir, "always")
        const big = "line of a large file\n".repeat(50_000)
        yield* store.persist(traceReading("t-1", big))
        yield* store.persist(traceReading("t-2", big))

        const text = yield* fs.readFileString(NodePath.join(dir, "2025-03.jsonl"))
        const lines = text.trimEnd().split("\n")
        assert.strictEqual(lines.length, 2)
        for (const line of lines) assert.isBelow(Buffer.byteLength(line), 8 * 1024, "the line keeps only a head")
        const blobs = yield* fs.readDirectory(NodePath.join(dir, BLOBS_DIR))
        assert.strictEqual(blobs.length, 1, "the same content is stored once")

        const back = yield* store.get("t-2")
        assert.isTrue(Option.isSome(back))
        const step = Option.getOrThrow(back).steps[0]!
        assert.strictEqual(step.kind, "action")
        if (step.kind !== "action") return
        assert.deepStrictEqual(step.exec_result, { status: "success", content: big, source: "file:big.txt" })
      }))

    it.scoped("the head kept in the line never ends in half of an emoji", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* tempDir
        const store = yield* makeTraceStoreFile(dir, "always")
        // 2,047 characters, then emoji: the 2,048-character head would end between the two halves of one.
        const content = `${"x".repeat(2047)}${"😀".repeat(20_000)}`
        yield* store.persist(traceReading("t-1", content))
        const line = JSON.parse((yield* fs.readFileString(NodePath.join(dir, "2025-03.jsonl"))).trimEnd())
        const head: string = line.steps[0].exec_result.content
        assert.isTrue(head.isWellFormed())
        assert.isTrue(head.startsWith(`${"x".repeat(2047)}\n[... `), head.slice(0, 2100))
        const back = Option.getOrThrow(yield* store.get("t-1")).steps[0]!
        assert.strictEqual(back.kind === "action" ? back.exec_result?.content : undefined, content)
      }))

    it.scoped("a result at the limit stays in the line", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* tempDir
        const store = yield* makeTraceStoreFile(dir, "batch")
        const content = "x".repeat(ASIDE_BYTES)
        yield* store.persist(traceReading("t-1", content))
        assert.isFalse(yield* fs.exists(NodePath.join(dir, BLOBS_DIR)))
        const back = Option.getOrThrow(yield* store.get("t-1")).steps[0]!
        assert.strictEqual(back.kind === "action" ? back.exec_result?.content : undefined, content)
      }))

    it.scoped("a blob changed on the disk is reported, naming the file, not returned as the result", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* tempDir
        const store = yield* makeTraceStoreFile(dir, "always")
        yield* store.persist(traceReading("t-1", "y".repeat(ASIDE_BYTES + 1)))
        const [blob] = yield* fs.readDirectory(NodePath.join(dir, BLOBS_DIR))
        const file = NodePath.join(dir, BLOBS_DIR, blob!)
        yield* fs.writeFileString(file, "tampered")
        const error = yield* Effect.flip(store.get("t-1"))
        assert.strictEqual(error.reason, "Corrupt")
        assert.strictEqual(error.path, file)
      }))
  })
})
