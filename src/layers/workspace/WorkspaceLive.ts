import { type Error as PlatformError, FileSystem } from "@effect/platform"
import { Config, Effect, Either, Layer } from "effect"
import * as NodeFsPromises from "node:fs/promises"
import * as NodePath from "node:path"
import { messageOf, PathEscapeError, WorkspaceError } from "../../domain/Errors.js"
import { OWNER_FILE, OWNER_FOLDER } from "../../domain/OwnerOnly.js"
import { isInside, relativeInside } from "../../domain/Paths.js"
import { tempFileWriter } from "../../domain/TempFiles.js"
import { Workspace } from "../../services/Workspace.js"
import { defaultWorkspaceFiles } from "./WorkspaceDefaults.js"

const escape = (path: string, root: string) =>
  new PathEscapeError({ path, message: `path "${path}" resolves outside the workspace ${root}` })

/** Folders where myclaw writes state through a temporary file renamed into place. */
const STATE_DIRS = [".state", ".audit", ".audit/traces", ".audit/traces/blobs"]

const isLive = (pid: number): boolean => {
  if (pid === process.pid) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * Removes the temporary files of atomic writes whose writer is no longer running (a crash between the write
 * and the rename); a file this process's pid wrote is a previous incarnation's (a container's PID 1).
 */
const removeDeadTempFiles = (root: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const removed: Array<string> = []
    for (const dir of STATE_DIRS) {
      const names = yield* fs.readDirectory(NodePath.join(root, dir)).pipe(Effect.orElseSucceed(() => []))
      for (const name of names) {
        const pid = tempFileWriter(name)
        if (pid === undefined || isLive(pid)) continue
        const file = NodePath.join(root, dir, name)
        const gone = yield* fs.remove(file).pipe(Effect.either)
        if (Either.isRight(gone)) removed.push(file)
      }
    }
    if (removed.length > 0) {
      yield* Effect.logWarning(`removed ${removed.length} temporary files left by a crash: ${removed.join(", ")}`)
    }
  })

/**
 * Builds the Workspace service for a folder, creating it with the default files when it is new; with
 * `create: false` (read-only commands) a missing folder is an error and nothing is written.
 */
export const makeWorkspace = (home: string, options: { readonly create: boolean } = { create: true }) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const fail = (path: string) => (cause: PlatformError.PlatformError) =>
      new WorkspaceError({
        path,
        reason: cause._tag === "SystemError" && cause.reason === "PermissionDenied" ? "NotWritable" : "Io",
        message: `cannot prepare the workspace: ${messageOf(cause)}`,
        cause
      })
    if (!options.create) {
      const exists = yield* fs.exists(home).pipe(Effect.orElseSucceed(() => false))
      if (!exists) {
        return yield* new WorkspaceError({
          path: home,
          reason: "Io",
          message: "no workspace here (check MYCLAW_HOME); a read-only command creates nothing"
        })
      }
    } else {
      // A workspace made here is the owner's alone, and so is all it holds.
      yield* fs.makeDirectory(NodePath.join(home, ".audit"), { recursive: true, mode: OWNER_FOLDER }).pipe(
        Effect.mapError(fail(home))
      )
    }
    const root = yield* fs.realPath(home).pipe(Effect.mapError(fail(home)))
    if (options.create) {
      // Commands that write (chat, serve) stop here, naming the cause, rather than deep in a database open.
      const writable = yield* Effect.either(
        Effect.tryPromise(() => NodeFsPromises.access(root, NodeFsPromises.constants.W_OK))
      )
      if (writable._tag === "Left") {
        const code = (writable.left.error as NodeJS.ErrnoException).code ?? "unknown"
        return yield* new WorkspaceError({
          path: root,
          reason: "NotWritable",
          message:
            `the workspace cannot be written (${code}${
              code === "EROFS" ? ": a read-only file system" : ""
            }): chat and serve record every turn there; the read-only commands (audit verify, audit query, ` +
            "budget, trace) still work",
          cause: writable.left.error
        })
      }
    }
    for (const [name, content] of options.create ? defaultWorkspaceFiles : []) {
      const file = NodePath.join(root, name)
      if (!(yield* fs.exists(file).pipe(Effect.mapError(fail(file))))) {
        yield* fs.writeFileString(file, content, { mode: OWNER_FILE }).pipe(Effect.mapError(fail(file)))
        yield* Effect.logInfo(`created ${file}`)
      }
    }

    if (options.create) yield* removeDeadTempFiles(root)

    const lexical = (path: string): string | undefined => relativeInside(root, NodePath.resolve(root, path))
    const inside = (real: string) => isInside(root, real)

    const relative = (path: string) => {
      const rel = lexical(path)
      return rel === undefined ? Either.left(escape(path, root)) : Either.right(rel)
    }

    const resolve = (path: string) =>
      Effect.gen(function*() {
        const rel = yield* relative(path)
        let probe = NodePath.join(root, rel)
        const missing: Array<string> = []
        let links = 0
        for (;;) {
          const real = yield* Effect.option(fs.realPath(probe))
          if (real._tag === "Some") {
            if (!inside(real.value)) {
              return yield* new PathEscapeError({
                path,
                message: `path "${path}" leads outside the workspace through a symbolic link (${real.value})`
              })
            }
            return NodePath.join(real.value, ...missing.reverse())
          }
          // A dangling symlink: writing through it would create its target, so its target is what must stay inside.
          const link = yield* Effect.option(fs.readLink(probe))
          if (link._tag === "Some") {
            if (++links > 40) {
              return yield* new PathEscapeError({
                path,
                message: `path "${path}" has too many levels of symbolic links`
              })
            }
            probe = NodePath.resolve(NodePath.dirname(probe), link.value)
            continue
          }
          missing.push(NodePath.basename(probe))
          probe = NodePath.dirname(probe)
        }
      })

    const readOptional = (relativePath: string) => {
      const file = NodePath.join(root, relativePath)
      return fs.readFileString(file).pipe(
        Effect.map((text): string | undefined => text),
        Effect.catchIf(
          (error) => error._tag === "SystemError" && error.reason === "NotFound",
          () => Effect.succeed(undefined)
        ),
        Effect.mapError((error) =>
          new WorkspaceError({ path: file, reason: "Io", message: error.message, cause: error })
        )
      )
    }

    return Workspace.of({ root, relative, resolve, readOptional })
  })

export const WorkspaceHome = Config.string("MYCLAW_HOME").pipe(Config.withDefault("./workspace"))

/** The workspace at `MYCLAW_HOME` (default `./workspace`). */
export const WorkspaceLive = Layer.effect(
  Workspace,
  Effect.flatMap(WorkspaceHome, (home) => makeWorkspace(NodePath.resolve(home)))
)

/** The workspace at `MYCLAW_HOME` for read-only commands: it must exist, and nothing is created in it. */
export const WorkspaceExisting = Layer.effect(
  Workspace,
  Effect.flatMap(WorkspaceHome, (home) => makeWorkspace(NodePath.resolve(home), { create: false }))
)
