import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { appendAll, makeBatchEncoder, SYNC_APPEND_LIMIT } from "../../../src/layers/files/Append.js"

const withFile = <A, E>(use: (fd: number, file: string) => Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "myclaw-append-"))
      const file = NodePath.join(dir, "log.jsonl")
      return { dir, file, fd: NodeFs.openSync(file, "a") }
    }),
    ({ fd, file }) => use(fd, file),
    ({ dir, fd }) =>
      Effect.sync(() => {
        NodeFs.closeSync(fd)
        NodeFs.rmSync(dir, { recursive: true, force: true })
      })
  )

describe("appendAll", () => {
  it.effect("a small batch and a large one (past the in-thread limit) both land whole, in order", () =>
    withFile((fd, file) =>
      Effect.gen(function*() {
        const small = Buffer.from("first line\n")
        const large = Buffer.alloc(SYNC_APPEND_LIMIT * 3 + 7, "x")
        large[large.length - 1] = 0x0a
        yield* appendAll(fd, small)
        yield* appendAll(fd, large)
        yield* appendAll(fd, Buffer.from("last line\n"))
        const written = NodeFs.readFileSync(file)
        assert.strictEqual(written.length, small.length + large.length + "last line\n".length)
        assert.isTrue(written.subarray(0, small.length).equals(small))
        assert.strictEqual(written.subarray(written.length - 10).toString(), "last line\n")
      })
    ))

  it.effect("a write that cannot happen is an AppendError naming why, on either path", () =>
    Effect.gen(function*() {
      const closed = yield* withFile((fd) => Effect.succeed(fd))
      for (const size of [10, SYNC_APPEND_LIMIT + 1]) {
        const exit = yield* Effect.exit(appendAll(closed, Buffer.alloc(size)))
        assert.isTrue(Exit.isFailure(exit))
        if (Exit.isFailure(exit)) assert.include(String(exit.cause), "EBADF")
      }
    }))
})

describe("makeBatchEncoder", () => {
  it("gives each batch's lines as UTF-8, each followed by the terminator, whatever the batches before", () => {
    const encode = makeBatchEncoder(64)
    const batches: Array<ReadonlyArray<string>> = [
      [],
      ["a"],
      ["{\"x\":1}", "été ✓ 😀", ""],
      // Past the kept size: a buffer of its own; then small batches again.
      ["y".repeat(100), "z".repeat(30)],
      ["short"],
      ["ß".repeat(20), "b".repeat(25)],
      ["c"]
    ]
    for (const lines of batches) {
      for (const terminator of ["\n", "\r\n"]) {
        const bytes = encode(lines, terminator)
        assert.strictEqual(bytes.toString("utf8"), lines.map((line) => line + terminator).join(""))
        assert.strictEqual(bytes.length, Buffer.byteLength(lines.map((line) => line + terminator).join("")))
      }
    }
  })

  it("reuses one buffer up to the kept size, and never hands out the kept buffer for a batch past it", () => {
    const encode = makeBatchEncoder(64)
    const first = encode(["0123456789"], "\n")
    const second = encode(["abc"], "\n")
    assert.strictEqual(first.buffer, second.buffer)
    const large = encode(["x".repeat(100)], "\n")
    assert.notStrictEqual(large.buffer, second.buffer)
    assert.strictEqual(second.toString(), "abc\n")
    const after = encode(["def"], "\n")
    assert.strictEqual(after.buffer, second.buffer)
  })
})
