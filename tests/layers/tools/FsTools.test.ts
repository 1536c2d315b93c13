import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel } from "effect"
import type { Scope } from "effect"
import * as NodePath from "node:path"
import { AppConfig } from "../../../src/domain/AppConfig.js"
import { MyclawConfigFixed } from "../../../src/layers/MyclawConfigLive.js"
import { SecretsMemory } from "../../../src/layers/secrets/SecretsMemory.js"
import { WorkspaceTemp } from "../../../src/layers/Test.js"
import { ToolRegistryLive } from "../../../src/layers/tools/ToolRegistryLive.js"
import { ToolRegistry } from "../../../src/services/ToolRegistry.js"
import { Workspace } from "../../../src/services/Workspace.js"

const Tools = ToolRegistryLive.pipe(
  Layer.provideMerge(Layer.mergeAll(MyclawConfigFixed(AppConfig.make({})), WorkspaceTemp, SecretsMemory())),
  Layer.provideMerge(NodeContext.layer)
)

/** Validates and runs one call on a fresh registry over a fresh temp workspace. */
const run = (name: string, args: unknown) =>
  Effect.gen(function*() {
    const registry = yield* ToolRegistry
    const validated = registry.validate({ id: "c1", name, args })
    if (validated._tag === "Invalid") return assert.fail(validated.message)
    return yield* registry.execute(validated.prepared, validated.tool)
  })

const inWorkspace = <A, E>(
  f: (ctx: {
    readonly fs: FileSystem.FileSystem
    readonly root: string
  }) => Effect.Effect<A, E, ToolRegistry | FileSystem.FileSystem | Scope.Scope>
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const { root } = yield* Workspace
    return yield* f({ fs, root })
  }).pipe(Effect.provide(Tools), Logger.withMinimumLogLevel(LogLevel.Error))

describe("fs_read", () => {
  it.scoped("reads a file, with its source", () =>
    inWorkspace(({ fs, root }) =>
      Effect.gen(function*() {
        yield* fs.makeDirectory(NodePath.join(root, "notes"))
        yield* fs.writeFileString(NodePath.join(root, "notes/a.md"), "héllo 😀")
        assert.deepStrictEqual(yield* run("fs_read", { path: "notes/a.md" }), {
          status: "success",
          content: "héllo 😀",
          source: "file:notes/a.md"
        })
      })
    ))

  it.scoped("says when a file is empty", () =>
    inWorkspace(({ fs, root }) =>
      Effect.gen(function*() {
        yield* fs.writeFileString(NodePath.join(root, "empty.txt"), "")
        const result = yield* run("fs_read", { path: "empty.txt" })
        assert.strictEqual(result.status, "empty")
        assert.include(result.content, "empty.txt is empty")
      })
    ))

  it.scoped("reads the first max_bytes of a longer file and says so", () =>
    inWorkspace(({ fs, root }) =>
      Effect.gen(function*() {
        yield* fs.writeFileString(NodePath.join(root, "a.txt"), "hello world")
        const result = yield* run("fs_read", { path: "a.txt", max_bytes: 5 })
        assert.strictEqual(result.status, "partial")
        assert.strictEqual(result.content, "hello\n[first 5 of 11 bytes of a.txt]")
        assert.strictEqual((yield* run("fs_read", { path: "a.txt", max_bytes: 11 })).status, "success")
      })
    ))

  it.scoped("fails on a missing file and on a directory", () =>
    inWorkspace(() =>
      Effect.gen(function*() {
        const missing = yield* run("fs_read", { path: "nope.md" })
        assert.deepStrictEqual(missing, { status: "failed", content: "no such file or directory: nope.md" })
        const dir = yield* run("fs_read", { path: ".audit" })
        assert.strictEqual(dir.status, "failed")
        assert.include(dir.content, ".audit is a directory: use fs_list")
      })
    ))

  it.scoped("says a binary file (a PDF the owner sent) is not text instead of reading it as such", () =>
    inWorkspace(({ fs, root }) =>
      Effect.gen(function*() {
        const pdf = Buffer.concat([
          Buffer.from("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"),
          Buffer.alloc(64),
          Buffer.alloc(4000, 0xab)
        ])
        yield* fs.writeFile(NodePath.join(root, "report.pdf"), pdf)
        assert.deepStrictEqual(yield* run("fs_read", { path: "report.pdf" }), {
          status: "failed",
          content: `report.pdf is not a text file (${pdf.length} bytes of binary data): fs_read reads text`
        })
      })
    ))

  it.scoped("reads a UTF-16 text file by its byte order mark (as Windows saves them)", () =>
    inWorkspace(({ fs, root }) =>
      Effect.gen(function*() {
        const text = "Città 😀\r\nline two"
        const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")])
        const be = Buffer.from(le.subarray(2)).swap16()
        yield* fs.writeFile(NodePath.join(root, "le.txt"), le)
        yield* fs.writeFile(NodePath.join(root, "be.txt"), Buffer.concat([Buffer.from([0xfe, 0xff]), be]))
        for (const path of ["le.txt", "be.txt"]) {
          assert.deepStrictEqual(yield* run("fs_read", { path }), {
            status: "success",
            content: text,
            source: `file:${path}`
          })
        }
        // Cut in the middle of a character: the half is dropped, not shown as U+FFFD.
        const cut = yield* run("fs_read", { path: "le.txt", max_bytes: 7 })
        assert.strictEqual(cut.status, "partial")
        assert.strictEqual(cut.content, `Ci\n[first 7 of ${le.length} bytes of le.txt]`)
      })
    ))

  it.scoped("fails on a path outside the workspace", () =>
    inWorkspace(() =>
      Effect.gen(function*() {
        const result = yield* run("fs_read", { path: "../../etc/passwd" })
        assert.strictEqual(result.status, "failed")
        assert.include(result.content, "outside the workspace")
      })
    ))
})

describe("fs_list", () => {
  it.scoped("lists a folder sorted, folders with a trailing slash", () =>
    inWorkspace(({ fs, root }) =>
      Effect.gen(function*() {
        yield* fs.makeDirectory(NodePath.join(root, "notes/sub"), { recursive: true })
        yield* fs.writeFileString(NodePath.join(root, "notes/b.md"), "bb")
        yield* fs.writeFileString(NodePath.join(root, "notes/a.md"), "a")
        assert.deepStrictEqual(yield* run("fs_list", { path: "notes" }), {
          status: "success",
          content: "a.md (1 bytes)\nb.md (2 bytes)\nsub/",
          source: "dir:notes"
        })
      })
    ))

  it.scoped("a name with a line break, a control or bidi character, or spaces at an end is listed as a JSON string", () =>
    inWorkspace(({ fs, root }) =>
      Effect.gen(function*() {
        yield* fs.makeDirectory(NodePath.join(root, "odd"))
        yield* fs.writeFileString(NodePath.join(root, "odd/plain.md"), "p")
        yield* fs.writeFileString(NodePath.join(root, "odd/fake (1 bytes)\nsecret.md"), "abc")
        yield* fs.writeFileString(NodePath.join(root, "odd/ padded.md"), "")
        yield* fs.writeFileString(NodePath.join(root, "odd/invoice\u202Efdp.exe"), "x")
        const listed = yield* run("fs_list", { path: "odd" })
        assert.strictEqual(
          listed.content,
          [
            "\" padded.md\" (0 bytes)",
            "\"fake (1 bytes)\\nsecret.md\" (3 bytes)",
            "\"invoice\\u202efdp.exe\" (1 bytes)",
            "plain.md (1 bytes)"
          ].join("\n")
        )
        // What the model copies back (a JSON string in its arguments) names the file.
        const name = JSON.parse(listed.content.split("\n")[1]!.replace(/ \(3 bytes\)$/, "")) as string
        assert.strictEqual((yield* run("fs_read", { path: `odd/${name}` })).content, "abc")
      })
    ))

  it.scoped("lists the root by default", () =>
    inWorkspace(() =>
      Effect.gen(function*() {
        const result = yield* run("fs_list", {})
        assert.strictEqual(result.source, "dir:.")
        const lines = result.content.split("\n")
        assert.include(lines, ".audit/")
        assert.isTrue(lines.some((line) => line.startsWith("SOUL.md (")))
      })
    ))

  it.scoped("is empty for an empty folder, and fails for a missing one", () =>
    inWorkspace(({ fs, root }) =>
      Effect.gen(function*() {
        yield* fs.makeDirectory(NodePath.join(root, "void"))
        const empty = yield* run("fs_list", { path: "void" })
        assert.strictEqual(empty.status, "empty")
        assert.include(empty.content, "void is empty")
        assert.strictEqual((yield* run("fs_list", { path: "nope" })).status, "failed")
      })
    ))
})

describe("fs_write", () => {
  it.scoped("writes a file, creating its folders, then overwrites it", () =>
    inWorkspace(({ fs, root }) =>
      Effect.gen(function*() {
        const result = yield* run("fs_write", { path: "notes/deep/todo.md", content: "one" })
        assert.deepStrictEqual(result, { status: "success", content: "wrote 3 bytes to notes/deep/todo.md" })
        assert.strictEqual(yield* fs.readFileString(NodePath.join(root, "notes/deep/todo.md")), "one")
        yield* run("fs_write", { path: "notes/deep/todo.md", content: "two" })
        assert.strictEqual(yield* fs.readFileString(NodePath.join(root, "notes/deep/todo.md")), "two")
      })
    ))

  it.scoped("appends when asked", () =>
    inWorkspace(({ fs, root }) =>
      Effect.gen(function*() {
        yield* run("fs_write", { path: "log.md", content: "a\n" })
        const result = yield* run("fs_write", { path: "log.md", content: "é\n", append: true })
        assert.strictEqual(result.content, "appended 3 bytes to log.md")
        assert.strictEqual(yield* fs.readFileString(NodePath.join(root, "log.md")), "a\né\n")
      })
    ))

  it.scoped("refuses ../ and absolute paths and creates nothing outside", () =>
    inWorkspace(({ fs, root }) =>
      Effect.gen(function*() {
        const outside = NodePath.join(NodePath.dirname(root), `${NodePath.basename(root)}-outside.txt`)
        const relative = NodePath.relative(root, outside)
        for (const path of ["../outside.txt", relative, outside]) {
          const result = yield* run("fs_write", { path, content: "x" })
          assert.strictEqual(result.status, "failed", path)
          assert.include(result.content, "outside the workspace")
        }
        assert.isFalse(yield* fs.exists(NodePath.join(NodePath.dirname(root), "outside.txt")))
        assert.isFalse(yield* fs.exists(outside))
      })
    ))

  it.scoped("refuses to write through a symlink that leads outside, dangling or not", () =>
    inWorkspace(({ fs, root }) =>
      Effect.gen(function*() {
        const outside = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-outside-" })
        yield* fs.symlink(outside, NodePath.join(root, "out"))
        yield* fs.symlink(NodePath.join(outside, "dangling.txt"), NodePath.join(root, "dangling.txt"))
        for (const path of ["out/new.txt", "out/deep/new.txt", "dangling.txt"]) {
          const result = yield* run("fs_write", { path, content: "x" })
          assert.strictEqual(result.status, "failed", path)
          assert.include(result.content, "outside the workspace")
        }
        assert.deepStrictEqual(yield* fs.readDirectory(outside), [])
      })
    ))

  it.scoped("refuses to write through a link inside the workspace, so SOUL.md and .audit stay protected", () =>
    inWorkspace(({ fs, root }) =>
      Effect.gen(function*() {
        const soul = yield* fs.readFileString(NodePath.join(root, "SOUL.md"))
        yield* fs.symlink(NodePath.join(root, "SOUL.md"), NodePath.join(root, "soul-link"))
        yield* fs.symlink(NodePath.join(root, ".audit"), NodePath.join(root, "logs"))
        const viaFile = yield* run("fs_write", { path: "soul-link", content: "obey" })
        assert.strictEqual(viaFile.status, "failed")
        assert.include(viaFile.content, "symbolic link to SOUL.md")
        const viaDir = yield* run("fs_write", { path: "logs/forged.jsonl", content: "{}" })
        assert.strictEqual(viaDir.status, "failed")
        assert.strictEqual(yield* fs.readFileString(NodePath.join(root, "SOUL.md")), soul)
        assert.isFalse(yield* fs.exists(NodePath.join(root, ".audit", "forged.jsonl")))
      })
    ))
})

describe("fs_write and hard links", () => {
  it.scoped("refuses to write to a file with several names, whatever the policy said", () =>
    inWorkspace(({ fs, root }) =>
      Effect.gen(function*() {
        const soul = yield* fs.readFileString(NodePath.join(root, "SOUL.md"))
        yield* fs.link(NodePath.join(root, "SOUL.md"), NodePath.join(root, "notes.md"))
        const result = yield* run("fs_write", { path: "notes.md", content: "obey", append: true })
        assert.strictEqual(result.status, "failed")
        assert.include(result.content, "2 names")
        assert.strictEqual(yield* fs.readFileString(NodePath.join(root, "SOUL.md")), soul)
      })
    ))
})

describe("fs_read partial reads", () => {
  it.scoped("never end in half a character", () =>
    inWorkspace(({ fs, root }) =>
      Effect.gen(function*() {
        yield* fs.writeFileString(NodePath.join(root, "accents.txt"), "é".repeat(10))
        const result = yield* run("fs_read", { path: "accents.txt", max_bytes: 5 })
        assert.strictEqual(result.status, "partial")
        assert.isTrue(result.content.startsWith("éé\n[first 5 of 20 bytes"))
      })
    ))
})
