import { Effect } from "effect"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { messageOf, TraceStoreError } from "../../domain/Errors.js"
import type { ExecutionTrace } from "../../domain/ExecutionTrace.js"
import { OWNER_FILE, OWNER_FOLDER } from "../../domain/OwnerOnly.js"
import { sha256Hex } from "../../domain/Sha256.js"
import { cutAt } from "../../domain/Text.js"
import type { ToolResult } from "../../domain/ToolCall.js"

/** A tool result larger than this (in UTF-8 bytes) is stored aside, so that a trace line stays small. */
export const ASIDE_BYTES = 64 * 1024
/** What of a result stored aside the trace line keeps: enough to read it in a listing. */
const HEAD_CHARS = 2_048
export const BLOBS_DIR = "blobs"

const ioError = (path: string, what: string) => (error: unknown) =>
  new TraceStoreError({ path, reason: "Io", message: `${what}: ${messageOf(error)}`, cause: error })

const blobFile = (dir: string, sha256: string) => NodePath.join(dir, BLOBS_DIR, sha256)

/**
 * Writes `content` as `blobs/<sha256>` unless a blob with that hash is already there (the same result read
 * twice is stored once); written aside and renamed into place, so a blob is whole or absent.
 */
const putBlob = (dir: string, content: string, sync: boolean) =>
  Effect.tryPromise({
    try: async () => {
      const sha256 = sha256Hex(content)
      const file = blobFile(dir, sha256)
      const exists = await NodeFs.stat(file).then(() => true, () => false)
      if (!exists) {
        await NodeFs.mkdir(NodePath.dirname(file), { recursive: true, mode: OWNER_FOLDER })
        const temp = `${file}.${process.pid}.tmp`
        const handle = await NodeFs.open(temp, "w", OWNER_FILE)
        try {
          await handle.writeFile(content)
          if (sync) await handle.datasync()
        } finally {
          await handle.close()
        }
        await NodeFs.rename(temp, file)
      }
      return { sha256, bytes: Buffer.byteLength(content) }
    },
    catch: ioError(NodePath.join(dir, BLOBS_DIR), "cannot store a large tool result")
  })

type Step = ExecutionTrace["steps"][number]
const resultOf = (step: Step): ToolResult | null => step.kind === "action" ? step.exec_result : null

const mapResults = <E>(
  trace: ExecutionTrace,
  f: (result: ToolResult) => Effect.Effect<ToolResult, E>
): Effect.Effect<ExecutionTrace, E> => {
  const touched = (step: Step) => {
    const result = resultOf(step)
    return result !== null && needsWork(result)
  }
  if (!trace.steps.some(touched)) return Effect.succeed(trace)
  return Effect.map(
    Effect.forEach(
      trace.steps,
      (step): Effect.Effect<Step, E> =>
        step.kind === "action" && step.exec_result !== null && needsWork(step.exec_result)
          ? Effect.map(f(step.exec_result), (result) => ({ ...step, exec_result: result }))
          : Effect.succeed(step)
    ),
    (steps) => ({ ...trace, steps })
  )
}

const needsWork = (result: ToolResult) => result.aside !== undefined || result.content.length > HEAD_CHARS

/** The trace as its line stores it: every result over `ASIDE_BYTES` in a blob, its first characters kept. */
export const storeAside = (dir: string, trace: ExecutionTrace, sync: boolean) =>
  mapResults(trace, (result) =>
    result.aside !== undefined || Buffer.byteLength(result.content) <= ASIDE_BYTES
      ? Effect.succeed(result)
      : Effect.map(putBlob(dir, result.content, sync), (aside): ToolResult => ({
        ...result,
        content: `${cutAt(result.content, HEAD_CHARS)}\n[... ${aside.bytes} bytes in all, stored in ` +
          `${BLOBS_DIR}/${aside.sha256}]`,
        aside
      })))

/** The trace as it ran: every result stored aside read back whole (and checked against its hash). */
export const restoreAside = (dir: string, trace: ExecutionTrace) =>
  mapResults(trace, (result) => {
    const aside = result.aside
    if (aside === undefined) return Effect.succeed(result)
    const file = blobFile(dir, aside.sha256)
    return Effect.tryPromise({
      try: () => NodeFs.readFile(file, "utf8"),
      catch: ioError(file, `trace ${trace.trace_id}: a result stored aside cannot be read`)
    }).pipe(
      Effect.filterOrFail(
        (content) => sha256Hex(content) === aside.sha256,
        () =>
          new TraceStoreError({
            path: file,
            reason: "Corrupt",
            message: `trace ${trace.trace_id}: the result stored aside does not match its hash`
          })
      ),
      Effect.map((content): ToolResult => {
        const { aside: _aside, ...rest } = result
        return { ...rest, content }
      })
    )
  })
