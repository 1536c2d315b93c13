import { Effect } from "effect"
import { createHash } from "node:crypto"
import { createReadStream, createWriteStream } from "node:fs"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { pipeline } from "node:stream/promises"
import { syncPath } from "../../domain/FileSync.js"
import { fileError, forEachLine, loadZlib } from "./Lines.js"
import { monthOfFile } from "./Seal.js"

/**
 * Monthly rotation: traces and events of a month go to `YYYY-MM.jsonl`; at the first
 * append of a new month the new file starts by name and the previous one is compressed to
 * `YYYY-MM.jsonl.gz`. The plain file is deleted only once the archive is synced and reads back identical.
 */

/** `YYYY-MM` of an instant, in UTC. */
export const monthOfMillis = (millis: number): string => new Date(millis).toISOString().slice(0, 7)

export const monthlyFile = (month: string): string => `${month}.jsonl`

const digestOf = async (path: string, compressed: boolean) => {
  const hash = createHash("sha256")
  let size = 0
  await forEachLine(path, (bytes, terminated) => {
    hash.update(bytes)
    if (terminated) hash.update("\n")
    size += bytes.length + (terminated ? 1 : 0)
  }, { compressed })
  return `${size}:${hash.digest("hex")}`
}

/** Compresses `dir/YYYY-MM.jsonl` to `YYYY-MM.jsonl.gz`, then removes the plain file. */
export const compressMonth = (dir: string, file: string) =>
  Effect.tryPromise({
    try: async () => {
      const source = NodePath.join(dir, file)
      const archive = `${source}.gz`
      const temporary = `${archive}.tmp`
      const { createGzip } = await loadZlib()
      await pipeline(createReadStream(source), createGzip({ level: 6 }), createWriteStream(temporary, { mode: 0o600 }))
      await syncPath(temporary)
      if ((await digestOf(temporary, true)) !== (await digestOf(source, false))) {
        await NodeFs.rm(temporary, { force: true })
        throw new Error("the compressed copy does not read back identical; the plain file is kept")
      }
      await NodeFs.rename(temporary, archive)
      await syncPath(dir)
      await NodeFs.rm(source)
      await syncPath(dir)
    },
    catch: fileError(NodePath.join(dir, file), "cannot compress the month's audit file")
  })

/**
 * Finishes what an interrupted rotation left: removes temporary archives and compresses every plain monthly
 * file older than `keepMonth` (the chain's head), including one whose archive already exists.
 */
export const compressOlderMonths = (dir: string, keepMonth: string | undefined) =>
  Effect.gen(function*() {
    const names = yield* Effect.tryPromise({
      try: () => NodeFs.readdir(dir),
      catch: fileError(dir, "cannot list the audit files")
    })
    for (const name of names.filter((n) => n.endsWith(".jsonl.gz.tmp"))) {
      yield* Effect.tryPromise({
        try: () => NodeFs.rm(NodePath.join(dir, name), { force: true }),
        catch: fileError(dir, "cannot clean up")
      })
    }
    for (const name of names.sort()) {
      const month = monthOfFile(name)
      if (month === undefined || name.endsWith(".gz") || keepMonth === undefined || month >= keepMonth) continue
      yield* compressMonth(dir, name).pipe(
        Effect.catchAll((error) => Effect.logError(`audit rotation: ${error.message}`))
      )
    }
  })
