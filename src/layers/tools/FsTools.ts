import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect, Either, Option, Schema } from "effect"
import * as NodePath from "node:path"
import { ToolExecutionError } from "../../domain/Errors.js"
import { byteOrderMark, quotedWhenHidden } from "../../domain/Text.js"
import { defineTool } from "../../domain/Tool.js"
import { Workspace } from "../../services/Workspace.js"

const DEFAULT_MAX_BYTES = 1024 * 1024
const MAX_ENTRIES = 500

const failure = (tool: string, path: string) => (error: PlatformError) =>
  new ToolExecutionError({
    tool,
    message: error._tag === "SystemError" && error.reason === "NotFound"
      ? `no such file or directory: ${path}`
      : `${path}: ${error.message}`
  })

/**
 * A file's bytes as text: UTF-16 when a byte order mark says so (as Windows saves text), else UTF-8 (a byte order
 * mark dropped). Undefined for binary data, told as git tells it: a NUL byte in the first 8000 bytes, which no text
 * in UTF-8 holds. Reading such a file as text would give the model pages of U+FFFD, and keep them in the trace.
 */
const decodeText = (bytes: Uint8Array): string | undefined => {
  const marked = byteOrderMark(bytes)
  if (marked === undefined && bytes.subarray(0, 8000).includes(0)) return undefined
  return new TextDecoder(marked ?? "utf-8").decode(bytes)
}

/** fs_read, fs_list and fs_write, confined to the workspace (no `..`, no symlink escape). */
export const makeFsTools = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const workspace = yield* Workspace
  const lexicalTarget = (path: string) =>
    Either.getOrElse(workspace.relative(path), () => NodePath.resolve(workspace.root, path))

  const fsRead = defineTool({
    name: "fs_read",
    description: "Read a text file of the workspace. Paths are relative to the workspace root.",
    parameters: Schema.Struct({
      path: Schema.String,
      max_bytes: Schema.optional(Schema.Int.pipe(Schema.positive()))
    }),
    hasSideEffects: false,
    external: true,
    targetKind: "path",
    target: ({ path }) => lexicalTarget(path),
    summarize: ({ path }) => `read ${path}`,
    execute: ({ max_bytes, path }) =>
      Effect.gen(function*() {
        const file = yield* workspace.resolve(path)
        const rel = NodePath.relative(workspace.root, file) || "."
        const info = yield* fs.stat(file).pipe(Effect.mapError(failure("fs_read", rel)))
        if (info.type === "Directory") {
          return yield* new ToolExecutionError({ tool: "fs_read", message: `${rel} is a directory: use fs_list` })
        }
        const size = Number(info.size)
        const limit = Math.min(max_bytes ?? DEFAULT_MAX_BYTES, DEFAULT_MAX_BYTES)
        const bytes = yield* Effect.scoped(
          Effect.flatMap(fs.open(file), (handle) => handle.readAlloc(Math.min(size, limit)))
        ).pipe(Effect.mapError(failure("fs_read", rel)))
        const decoded = decodeText(bytes._tag === "Some" ? bytes.value : new Uint8Array(0))
        if (decoded === undefined) {
          return yield* new ToolExecutionError({
            tool: "fs_read",
            message: `${rel} is not a text file (${size} bytes of binary data): fs_read reads text`
          })
        }
        // A cut inside a multi-byte character would show as U+FFFD: drop that partial character.
        const content = size > limit ? decoded.replace(/\uFFFD+$/, "") : decoded
        const source = `file:${rel}`
        if (size === 0) return { status: "empty", content: `${rel} is empty`, source } as const
        if (size > limit) {
          return {
            status: "partial",
            content: `${content}\n[first ${limit} of ${size} bytes of ${rel}]`,
            source
          } as const
        }
        return { status: "success", content, source } as const
      })
  })

  const fsList = defineTool({
    name: "fs_list",
    description: "List a folder of the workspace (default: its root). Folders end with '/'.",
    parameters: Schema.Struct({ path: Schema.optional(Schema.String) }),
    hasSideEffects: false,
    external: true,
    targetKind: "path",
    target: ({ path }) => lexicalTarget(path ?? "."),
    summarize: ({ path }) => `list ${path ?? "."}`,
    execute: ({ path = "." }) =>
      Effect.gen(function*() {
        const dir = yield* workspace.resolve(path)
        const rel = NodePath.relative(workspace.root, dir) || "."
        const names = yield* fs.readDirectory(dir).pipe(Effect.mapError(failure("fs_list", rel)))
        const entries = yield* Effect.forEach(names.sort().slice(0, MAX_ENTRIES), (name) =>
          fs.stat(NodePath.join(dir, name)).pipe(
            Effect.map((info) => {
              const shown = quotedWhenHidden(name)
              return info.type === "Directory" ? `${shown}/` : `${shown} (${info.size} bytes)`
            }),
            Effect.orElseSucceed(() =>
              quotedWhenHidden(name)
            )
          ))
        const source = `dir:${rel}`
        if (entries.length === 0) return { status: "empty", content: `${rel} is empty`, source } as const
        const more = names.length > MAX_ENTRIES ? `\n[${names.length - MAX_ENTRIES} more entries not shown]` : ""
        return { status: more ? "partial" : "success", content: entries.join("\n") + more, source } as const
      })
  })

  const fsWrite = defineTool({
    name: "fs_write",
    description: "Write (or append to) a text file of the workspace, creating its folders. Needs the owner's approval.",
    parameters: Schema.Struct({
      path: Schema.String,
      content: Schema.String,
      append: Schema.optional(Schema.Boolean)
    }),
    hasSideEffects: true,
    external: false,
    targetKind: "path",
    target: ({ path }) => lexicalTarget(path),
    summarize: ({ append, content, path }) =>
      `${append ? "append" : "write"} ${Buffer.byteLength(content)} bytes to ${path}`,
    execute: ({ append, content, path }) =>
      Effect.gen(function*() {
        const file = yield* workspace.resolve(path)
        const rel = NodePath.relative(workspace.root, file)
        // The policy judged the path as written; a symbolic link would make the write land elsewhere.
        const named = lexicalTarget(path)
        if (rel !== named) {
          return yield* new ToolExecutionError({
            tool: "fs_write",
            message:
              `${named} leads through a symbolic link to ${rel}: writes through links are refused; name the file itself`
          })
        }
        // A file with several names (hard links) would change under all of them, a protected one included.
        const existing = yield* Effect.option(fs.stat(file))
        const names = Option.isSome(existing) ? Option.getOrElse(existing.value.nlink, () => 1) : 1
        if (names > 1) {
          return yield* new ToolExecutionError({
            tool: "fs_write",
            message: `${rel} has ${names} names (hard links): writes to it are refused`
          })
        }
        yield* fs.makeDirectory(NodePath.dirname(file), { recursive: true }).pipe(
          Effect.mapError(failure("fs_write", rel))
        )
        yield* fs.writeFileString(file, content, { flag: append ? "a" : "w" }).pipe(
          Effect.mapError(failure("fs_write", rel))
        )
        const bytes = Buffer.byteLength(content)
        return { status: "success", content: `${append ? "appended" : "wrote"} ${bytes} bytes to ${rel}` } as const
      })
  })

  return [fsRead, fsList, fsWrite] as const
})
