import { Effect } from "effect"
import { createReadStream } from "node:fs"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { AuditError, messageOf } from "../../domain/Errors.js"
import { linesFromEnd } from "../files/LinesFromEnd.js"
import { chainOfFile, MONTHLY_CHAIN, monthOfFile } from "./Seal.js"

/** Reading audit files: whole lines as bytes, newest lines from the end, and which files form which chain. */

const NEWLINE = 10

/** node:zlib, loaded when an archive is read or written: most commands touch none, and it takes milliseconds. */
export const loadZlib = () => import("node:zlib")

/**
 * Calls `onLine` for every line of a file (gunzipped for `.gz`), with its bytes (no newline) and whether a
 * newline ended it; only the last line can be unterminated. `limit` reads only the first `limit` bytes.
 */
export const forEachLine = async (
  path: string,
  onLine: (bytes: Buffer, terminated: boolean) => void,
  options: {
    readonly limit?: number | undefined
    readonly start?: number | undefined
    readonly compressed?: boolean | undefined
  } = {}
): Promise<void> => {
  const start = options.start ?? 0
  if (options.limit !== undefined && options.limit <= start) return
  const gunzip = (options.compressed ?? path.endsWith(".gz")) ? (await loadZlib()).createGunzip() : undefined
  const raw = createReadStream(path, {
    start,
    ...(options.limit === undefined ? {} : { end: options.limit - 1 }),
    highWaterMark: 1 << 20
  })
  const stream = gunzip === undefined ? raw : raw.pipe(gunzip)
  raw.on("error", (error) => stream.destroy(error))
  let pending: Array<Buffer> = []
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let from = 0
    let newline = chunk.indexOf(NEWLINE, from)
    while (newline !== -1) {
      const piece = chunk.subarray(from, newline)
      onLine(pending.length === 0 ? piece : Buffer.concat([...pending, piece]), true)
      pending = []
      from = newline + 1
      newline = chunk.indexOf(NEWLINE, from)
    }
    if (from < chunk.length) pending.push(chunk.subarray(from))
  }
  if (pending.length > 0) onLine(Buffer.concat(pending), false)
}

export interface Tail {
  /** Size of the file (decompressed for `.gz`). */
  readonly size: number
  /** Bytes after the last newline: a partial line, empty when the file ends with a newline. */
  readonly partial: Buffer
  /** The last whole line and where it starts, if any. */
  readonly last: { readonly bytes: Buffer; readonly start: number } | undefined
}

/** The end of a file, read backwards from its end (the whole stream for a `.gz`). */
export const readTail = async (path: string): Promise<Tail> => {
  if (path.endsWith(".gz")) {
    let size = 0
    let last: Tail["last"] = undefined
    let partial = Buffer.alloc(0)
    await forEachLine(path, (bytes, terminated) => {
      if (terminated) last = { bytes: Buffer.from(bytes), start: size }
      else partial = Buffer.from(bytes)
      size += bytes.length + (terminated ? 1 : 0)
    })
    return { size, partial, last }
  }
  let last: Tail["last"] = undefined
  const { partial, size } = await linesFromEnd(path, (bytes, start) => {
    last = { bytes: Buffer.from(bytes), start }
    return false
  })
  return { size, partial, last }
}

export interface AuditFile {
  /** The name on disk, e.g. `2026-03.jsonl.gz`. */
  readonly name: string
  /** The name the records were written under (`2026-03.jsonl`), the same for the compressed archive. */
  readonly logical: string
  readonly chain: string
}

/**
 * The audit files of a folder by chain, each chain's files in order (months ascending). When a month exists
 * both plain and compressed (a compression cut short), the plain file is the one read.
 */
export const listChains = (auditDir: string) =>
  Effect.tryPromise({
    try: async () => {
      const names = await NodeFs.readdir(auditDir).catch((error: NodeJS.ErrnoException) => {
        if (error.code === "ENOENT") return [] as Array<string>
        throw error
      })
      const present = new Set(names)
      const chains = new Map<string, Array<AuditFile>>()
      for (const name of [...names].sort()) {
        const chain = chainOfFile(name)
        if (chain === undefined) continue
        if (name.endsWith(".gz") && present.has(name.slice(0, -3))) continue
        const logical = name.endsWith(".gz") ? name.slice(0, -3) : name
        const files = chains.get(chain) ?? []
        files.push({ name, logical, chain })
        chains.set(chain, files)
      }
      return chains
    },
    catch: fileError(auditDir, "cannot list the audit files")
  })

export const isMonthly = (file: AuditFile): boolean => file.chain === MONTHLY_CHAIN

export const monthOf = (file: AuditFile): string | undefined => monthOfFile(file.name)

export const fileError = (path: string, what: string) => (error: unknown) =>
  new AuditError({ path, reason: "Io", message: `${what}: ${messageOf(error)}`, cause: error })

export const joinPath = NodePath.join
