import { FileSystem } from "@effect/platform"
import { Clock, Effect, Schema } from "effect"
import * as NodePath from "node:path"
import { ToolExecutionError } from "../../domain/Errors.js"
import { localDay } from "../../domain/Time.js"
import { defineTool } from "../../domain/Tool.js"
import { MyclawConfig } from "../../services/MyclawConfig.js"
import { Workspace } from "../../services/Workspace.js"

const MemoryFile = Schema.Literal("MEMORY.md", "USER.md")
const OneLine = (max: number) =>
  Schema.String.pipe(
    Schema.minLength(1),
    Schema.maxLength(max),
    Schema.filter((text) => !/[\r\n]/.test(text) || "must be one line")
  )

/** One dated line, as `memory_note` appends it. */
export const memoryLine = (day: string, note: string, source: string): string => `- ${day}: ${note} (source: ${source})`

/**
 * `memory_note`: appends one line, dated with the owner's day and with its source, to MEMORY.md (or USER.md for
 * facts about the owner). It never rewrites the file; the owner reads and edits it directly. Side-effecting: the
 * policy and the owner's approval apply, and the edit is a `workspace_edit` audit record.
 */
export const makeMemoryNoteTool = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const workspace = yield* Workspace
  // The owner's day, as the budget and the digest count it.
  const { timeZone } = (yield* MyclawConfig).config.budget
  return defineTool({
    name: "memory_note",
    description: "Propose one line for long-term memory: appended to MEMORY.md (or USER.md for facts about the " +
      "owner) with today's date and its source. Needs the owner's approval; never rewrites the file.",
    parameters: Schema.Struct({
      note: OneLine(500),
      source: OneLine(200).annotations({ description: "where it comes from, e.g. 'the owner, in chat'" }),
      file: Schema.optional(MemoryFile)
    }),
    hasSideEffects: true,
    external: false,
    targetKind: "path",
    target: ({ file }) => file ?? "MEMORY.md",
    summarize: ({ file, note }) => `add to ${file ?? "MEMORY.md"}: ${note}`,
    execute: ({ file, note, source }) =>
      Effect.gen(function*() {
        const name = file ?? "MEMORY.md"
        const path = NodePath.join(workspace.root, name)
        const day = localDay(yield* Clock.currentTimeMillis, timeZone)
        const before = yield* fs.readFileString(path).pipe(Effect.orElseSucceed(() => ""))
        const line = memoryLine(day, note, source)
        const text = `${before === "" || before.endsWith("\n") ? "" : "\n"}${line}\n`
        yield* fs.writeFileString(path, text, { flag: "a" }).pipe(
          Effect.mapError((error) =>
            new ToolExecutionError({ tool: "memory_note", message: `${name}: ${error.message}` })
          )
        )
        return { status: "success", content: `added to ${name}: ${line}` } as const
      })
  })
})
