import { Error as PlatformError, FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { assert, layer } from "@effect/vitest"
import { Effect, Either, Logger, LogLevel } from "effect"
import { spawnSync } from "node:child_process"
import * as NodePath from "node:path"
import { makeWorkspace } from "../../../src/layers/workspace/WorkspaceLive.js"

/** A workspace in a temp dir, plus a sibling temp dir standing for "outside". */
const setup = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const home = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-ws-" })
  const outside = yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-outside-" }))
  const workspace = yield* makeWorkspace(home).pipe(Logger.withMinimumLogLevel(LogLevel.Error))
  return { fs, workspace, root: workspace.root, outside }
})

const relativeOf = (either: Either.Either<string, { readonly _tag: string }>) =>
  Either.match(either, { onLeft: (error) => error._tag, onRight: (rel) => rel })

layer(NodeContext.layer)("WorkspaceLive", (it) => {
  it.scoped("a fresh workspace gets the default files and the .audit folder", () =>
    Effect.gen(function*() {
      const { fs, root } = yield* setup
      for (const name of ["SOUL.md", "IDENTITY.md", "USER.md", "MEMORY.md"]) {
        const text = yield* fs.readFileString(NodePath.join(root, name))
        assert.isAbove(text.length, 0, name)
      }
      assert.strictEqual((yield* fs.stat(NodePath.join(root, ".audit"))).type, "Directory")
    }))

  it.scoped("removes at start the temporary files of atomic writes whose process died, not a live one's", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const home = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-ws-" })
      const dead = spawnSync("node", ["-e", ""]).pid!
      const live = process.ppid
      for (const dir of [".state", ".audit/traces"]) {
        yield* fs.makeDirectory(NodePath.join(home, dir), { recursive: true })
      }
      const leftovers = [
        ".state/constitution.json." + dead + ".tmp",
        ".audit/traces/recent.json." + dead + ".tmp",
        ".audit/traces/2026-04.idx." + dead + ".tmp"
      ]
      const kept = [".state/budget.json." + live + ".tmp", ".state/notes.tmp", "draft.tmp"]
      for (const name of [...leftovers, ...kept]) yield* fs.writeFileString(NodePath.join(home, name), "{")
      yield* makeWorkspace(home).pipe(Logger.withMinimumLogLevel(LogLevel.Error))
      for (const name of leftovers) assert.isFalse(yield* fs.exists(NodePath.join(home, name)), name)
      for (const name of kept) assert.isTrue(yield* fs.exists(NodePath.join(home, name)), name)
    }))

  it.scoped("never overwrites an existing SOUL.md, and creates the rest", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const home = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-ws-" })
      yield* fs.writeFileString(NodePath.join(home, "SOUL.md"), "my own constitution")
      const workspace = yield* makeWorkspace(home).pipe(Logger.withMinimumLogLevel(LogLevel.Error))
      assert.strictEqual(yield* fs.readFileString(NodePath.join(home, "SOUL.md")), "my own constitution")
      assert.isTrue(yield* fs.exists(NodePath.join(home, "MEMORY.md")))
      yield* makeWorkspace(home).pipe(Logger.withMinimumLogLevel(LogLevel.Error))
      assert.strictEqual(yield* workspace.readOptional("SOUL.md"), "my own constitution")
    }))

  it.scoped("the root is absolute and symlink-free", () =>
    Effect.gen(function*() {
      const { fs, root } = yield* setup
      assert.isTrue(NodePath.isAbsolute(root))
      assert.strictEqual(yield* fs.realPath(root), root)
    }))

  it.scoped("relative() resolves lexically and rejects escapes", () =>
    Effect.gen(function*() {
      const { root, workspace } = yield* setup
      assert.strictEqual(relativeOf(workspace.relative("a/../b")), "b")
      assert.strictEqual(relativeOf(workspace.relative("./notes//a.md")), "notes/a.md")
      assert.strictEqual(relativeOf(workspace.relative(".")), ".")
      assert.strictEqual(relativeOf(workspace.relative("")), ".")
      assert.strictEqual(relativeOf(workspace.relative(NodePath.join(root, "notes/a.md"))), "notes/a.md")
      assert.strictEqual(relativeOf(workspace.relative("../x")), "PathEscapeError")
      assert.strictEqual(relativeOf(workspace.relative("a/../../x")), "PathEscapeError")
      assert.strictEqual(relativeOf(workspace.relative("..")), "PathEscapeError")
      assert.strictEqual(relativeOf(workspace.relative("/etc/passwd")), "PathEscapeError")
      assert.strictEqual(relativeOf(workspace.relative(root + "-sibling/x")), "PathEscapeError")
    }))

  it.scoped("relative() accepts names that merely start with two dots", () =>
    Effect.gen(function*() {
      const { workspace } = yield* setup
      assert.strictEqual(relativeOf(workspace.relative("..notes")), "..notes")
      assert.strictEqual(relativeOf(workspace.relative("dir/..hidden/a.md")), "dir/..hidden/a.md")
    }))

  it.scoped("resolve() accepts plain paths, existing or not", () =>
    Effect.gen(function*() {
      const { root, workspace } = yield* setup
      assert.strictEqual(yield* workspace.resolve("SOUL.md"), NodePath.join(root, "SOUL.md"))
      assert.strictEqual(yield* workspace.resolve("new/dir/file.md"), NodePath.join(root, "new/dir/file.md"))
      assert.strictEqual(yield* workspace.resolve("."), root)
    }))

  it.scoped("resolve() rejects a directory symlink that leads outside, and paths through it", () =>
    Effect.gen(function*() {
      const { fs, outside, root, workspace } = yield* setup
      yield* fs.writeFileString(NodePath.join(outside, "secret.txt"), "secret")
      yield* fs.symlink(outside, NodePath.join(root, "out"))
      for (const path of ["out", "out/secret.txt", "out/not-yet.txt", "out/new/dir/file.txt"]) {
        const error = yield* Effect.flip(workspace.resolve(path))
        assert.strictEqual(error._tag, "PathEscapeError", path)
        assert.strictEqual(error.path, path)
      }
    }))

  it.scoped("resolve() rejects a file symlink that leads outside", () =>
    Effect.gen(function*() {
      const { fs, outside, root, workspace } = yield* setup
      yield* fs.writeFileString(NodePath.join(outside, "secret.txt"), "secret")
      yield* fs.symlink(NodePath.join(outside, "secret.txt"), NodePath.join(root, "secret.txt"))
      assert.strictEqual((yield* Effect.flip(workspace.resolve("secret.txt")))._tag, "PathEscapeError")
    }))

  it.scoped("resolve() rejects a dangling symlink whose target would be created outside", () =>
    Effect.gen(function*() {
      const { fs, outside, root, workspace } = yield* setup
      yield* fs.symlink(NodePath.join(outside, "created.txt"), NodePath.join(root, "dangling.txt"))
      yield* fs.symlink(NodePath.join(outside, "no-such-dir"), NodePath.join(root, "dangling-dir"))
      assert.strictEqual((yield* Effect.flip(workspace.resolve("dangling.txt")))._tag, "PathEscapeError")
      assert.strictEqual((yield* Effect.flip(workspace.resolve("dangling-dir/x.txt")))._tag, "PathEscapeError")
    }))

  it.scoped("resolve() follows symlinks that stay inside, to their real path", () =>
    Effect.gen(function*() {
      const { fs, root, workspace } = yield* setup
      yield* fs.makeDirectory(NodePath.join(root, "notes"))
      yield* fs.symlink(NodePath.join(root, "notes"), NodePath.join(root, "n"))
      yield* fs.symlink("SOUL.md", NodePath.join(root, "soul-link"))
      yield* fs.symlink("notes/draft.md", NodePath.join(root, "draft"))
      assert.strictEqual(yield* workspace.resolve("n/a.md"), NodePath.join(root, "notes/a.md"))
      assert.strictEqual(yield* workspace.resolve("soul-link"), NodePath.join(root, "SOUL.md"))
      assert.strictEqual(yield* workspace.resolve("draft"), NodePath.join(root, "notes/draft.md"))
    }))

  it.scoped("resolve() fails, rather than loops, on a symlink cycle", () =>
    Effect.gen(function*() {
      const { fs, root, workspace } = yield* setup
      yield* fs.symlink("loop-b", NodePath.join(root, "loop-a"))
      yield* fs.symlink("loop-a", NodePath.join(root, "loop-b"))
      assert.strictEqual((yield* Effect.flip(workspace.resolve("loop-a/x")))._tag, "PathEscapeError")
    }))

  it.scoped("resolve() rejects lexical escapes before touching the disk", () =>
    Effect.gen(function*() {
      const { workspace } = yield* setup
      assert.strictEqual((yield* Effect.flip(workspace.resolve("../x")))._tag, "PathEscapeError")
      assert.strictEqual((yield* Effect.flip(workspace.resolve("/etc/passwd")))._tag, "PathEscapeError")
    }))

  it.scoped("readOptional() reads a file, and gives undefined for a missing one", () =>
    Effect.gen(function*() {
      const { fs, root, workspace } = yield* setup
      yield* fs.writeFileString(NodePath.join(root, "USER.md"), "Alice")
      assert.strictEqual(yield* workspace.readOptional("USER.md"), "Alice")
      assert.isUndefined(yield* workspace.readOptional("nope.md"))
      const error = yield* Effect.flip(workspace.readOptional(".audit"))
      assert.strictEqual(error._tag, "WorkspaceError")
      assert.strictEqual(error.reason, "Io")
    }))

  it.effect("a folder that cannot be created for lack of permission fails with reason NotWritable", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(makeWorkspace("/nowhere"))
      assert.strictEqual(error.reason, "NotWritable")
      assert.include(error.message, "cannot prepare the workspace: PermissionDenied")
    }).pipe(Effect.provide(FileSystem.layerNoop({
      makeDirectory: (path) =>
        Effect.fail(
          new PlatformError.SystemError({
            reason: "PermissionDenied",
            module: "FileSystem",
            method: "makeDirectory",
            pathOrDescriptor: path
          })
        )
    }))))
})
