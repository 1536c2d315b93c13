import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { linesFromEnd } from "../../../src/layers/files/LinesFromEnd.js"

const fileWith = (content: string | Buffer) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "myclaw-lines-"))
      const file = NodePath.join(dir, "lines.txt")
      NodeFs.writeFileSync(file, content)
      return file
    }),
    (file) => Effect.sync(() => NodeFs.rmSync(NodePath.dirname(file), { recursive: true, force: true }))
  )

/** Every line visited (text and offset), newest first, or the first `count`; and what came back. */
const visitAll = (file: string, count = Infinity) =>
  Effect.promise(async () => {
    const lines: Array<readonly [string, number]> = []
    const { partial, size } = await linesFromEnd(file, (line, start) => {
      lines.push([line.toString("utf8"), start])
      return lines.length < count
    })
    return { lines, partial: partial.toString("utf8"), size }
  })

describe("linesFromEnd", () => {
  it.scoped("visits whole lines newest first with their offsets; what follows the last newline is partial", () =>
    Effect.gen(function*() {
      const file = yield* fileWith("one\n\ntwo é\nthree\npart")
      const { lines, partial, size } = yield* visitAll(file)
      assert.deepStrictEqual(lines, [["three", 12], ["two é", 5], ["", 4], ["one", 0]])
      assert.strictEqual(partial, "part")
      assert.strictEqual(size, 22)
    }))

  it.scoped("stops when told, and reads no further than the lines it gave", () =>
    Effect.gen(function*() {
      const file = yield* fileWith("a\nb\nc\n")
      const { lines, partial } = yield* visitAll(file, 2)
      assert.deepStrictEqual(lines, [["c", 4], ["b", 2]])
      assert.strictEqual(partial, "")
    }))

  it.scoped("lines longer than a read, and a line cut across reads, come whole with their offsets", () =>
    Effect.gen(function*() {
      const long = ["x".repeat(150_000), "y".repeat(65_535), "z".repeat(65_537), "w"]
      const file = yield* fileWith(long.join("\n") + "\n" + "é".repeat(40_000))
      const { lines, partial } = yield* visitAll(file)
      let offset = 0
      const expected = long.map((line) => {
        const at = offset
        offset += line.length + 1
        return [line, at] as const
      })
      assert.deepStrictEqual(lines, expected.reverse())
      assert.strictEqual(partial, "é".repeat(40_000))
    }))

  it.scoped("a file of many lines, read in growing pieces, is visited whole: every line once, at its offset", () =>
    Effect.gen(function*() {
      // Lines of up to 5,000 bytes, about 5 MB: lines fall across the boundaries of reads of every size.
      const lines = Array.from({ length: 2_000 }, (_, i) => `${i}:` + "ab€".repeat((i * 7919) % 1000))
      const file = yield* fileWith(lines.join("\n") + "\n")
      const { lines: visited, partial } = yield* visitAll(file)
      let offset = 0
      const expected = lines.map((line) => {
        const at = offset
        offset += Buffer.byteLength(line) + 1
        return [line, at] as const
      })
      assert.deepStrictEqual(visited, expected.reverse())
      assert.strictEqual(partial, "")
    }))

  it.scoped("a file without a newline is all partial, and an empty file has nothing", () =>
    Effect.gen(function*() {
      const none = yield* visitAll(yield* fileWith("no newline".repeat(10_000)))
      assert.deepStrictEqual(none.lines, [])
      assert.strictEqual(none.partial, "no newline".repeat(10_000))
      const empty = yield* visitAll(yield* fileWith(""))
      assert.deepStrictEqual(empty, { lines: [], partial: "", size: 0 })
    }))
})
