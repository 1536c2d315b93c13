import { Effect } from "effect"
import * as NodeFs from "node:fs/promises"
import { syncPath } from "../../domain/FileSync.js"
import { type AuditFile, fileError, forEachLine, joinPath, listChains, readTail, type Tail } from "./Lines.js"
import { compressOlderMonths } from "./Rotation.js"
import { genesisOf, MONTHLY_CHAIN, monthOfFile, parseLine, sha256 } from "./Seal.js"

/** Where each chain stands when the writer starts: the file it appends to, its last seq and last line's hash. */
export interface Head {
  readonly chain: string
  /** The plain file appended to; undefined for a monthly chain whose newest month is already compressed. */
  file: string | undefined
  /** Monthly chain: the newest month on disk, plain or compressed; the chain never goes back before it. */
  newestMonth: string | undefined
  seq: number
  hash: string
  /** Bytes of `file` that are whole lines. */
  size: number
}

/** A torn last line cut off at start (a crash mid-write): what the `recovered` record reports. */
export interface Repair {
  readonly file: string
  readonly bytes: number
  readonly detail: string
}

export const newHead = (chain: string): Head => ({
  chain,
  file: chain === MONTHLY_CHAIN ? undefined : chain,
  newestMonth: undefined,
  seq: 0,
  hash: genesisOf(chain),
  size: 0
})

/**
 * Cuts a torn last line: bytes after the last newline, or a last line that is not JSON. The only truncation
 * myclaw ever does; damage anywhere else is left for verify to report.
 */
const repairTail = async (auditDir: string, name: string, repairs: Array<Repair>): Promise<Tail> => {
  const path = joinPath(auditDir, name)
  const tail = await readTail(path)
  const unparsable = tail.partial.length === 0 && tail.last !== undefined && parseLine(tail.last.bytes) === undefined
  if (tail.partial.length === 0 && !unparsable) return tail
  const keep = tail.partial.length > 0 ? tail.size - tail.partial.length : tail.last!.start
  const cut = tail.size - keep
  await NodeFs.truncate(path, keep)
  await syncPath(path, "r+")
  repairs.push({
    file: name,
    bytes: cut,
    detail: `${unparsable ? "an unparsable" : "an unterminated"} last line of ${cut} bytes (sha256 ${
      sha256(tail.partial.length > 0 ? tail.partial : tail.last!.bytes)
    }) was cut: a write interrupted by a crash`
  })
  return readTail(path)
}

/** The highest seq of a chain by reading it whole, when its last line does not say (it is damaged). */
const scanSeq = async (auditDir: string, files: ReadonlyArray<AuditFile>) => {
  let seq = 0
  for (const file of files) {
    await forEachLine(joinPath(auditDir, file.name), (bytes) => {
      const value = parseLine(bytes)?.seq
      seq = typeof value === "number" && value > seq ? value : seq + 1
    })
  }
  return seq
}

/** Reads every chain's head, finishing an interrupted rotation and repairing torn last lines first. */
export const loadHeads = (auditDir: string) =>
  Effect.gen(function*() {
    const before = yield* listChains(auditDir)
    const months = before.get(MONTHLY_CHAIN) ?? []
    yield* compressOlderMonths(auditDir, months.length === 0 ? undefined : monthOfFile(months[months.length - 1]!.name))
    const chains = yield* listChains(auditDir)
    return yield* Effect.tryPromise({
      try: async () => {
        const heads = new Map<string, Head>()
        const repairs: Array<Repair> = []
        for (const [chain, files] of chains) {
          const head = newHead(chain)
          const newest = files[files.length - 1]!
          const plain = !newest.name.endsWith(".gz")
          head.file = plain ? newest.name : undefined
          head.newestMonth = monthOfFile(newest.name)
          for (let i = files.length - 1; i >= 0; i--) {
            const file = files[i]!
            const tail = i === files.length - 1 && plain
              ? await repairTail(auditDir, file.name, repairs)
              : await readTail(joinPath(auditDir, file.name))
            if (i === files.length - 1 && plain) head.size = tail.size
            if (tail.last === undefined) continue
            const seq = parseLine(tail.last.bytes)?.seq
            head.seq = typeof seq === "number" ? seq : await scanSeq(auditDir, files.slice(0, i + 1))
            head.hash = sha256(tail.last.bytes)
            break
          }
          heads.set(chain, head)
        }
        return { heads, repairs, hasRecords: [...heads.values()].some((head) => head.seq > 0) }
      },
      catch: fileError(auditDir, "cannot read the ends of the audit files")
    })
  })
