import { Effect, Schema } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { messageOf, TraceStoreError } from "../../domain/Errors.js"
import { exactCheck } from "../../domain/ExactCheck.js"
import { decodeTrace, type ExecutionTrace } from "../../domain/ExecutionTrace.js"
import { onFirstCall } from "../../domain/OnFirstCall.js"
import { OWNER_FILE, OWNER_FOLDER } from "../../domain/OwnerOnly.js"
import {
  ListedFields,
  listingOf,
  matchesFilter,
  plainListing,
  type TraceFilter,
  TraceListing
} from "../../domain/TraceListing.js"
import { linesFromEnd } from "../files/LinesFromEnd.js"
import { restoreAside } from "./Blobs.js"
import { lastTurns } from "./Recent.js"

/**
 * The trace index: for each monthly file `YYYY-MM.jsonl`, `index/YYYY-MM.idx` holds one listing per trace
 * (id, session, outcome, where its line is) and how many bytes of the file it covers. Reading a trace by id
 * reads the small index files and that one line; a file that grew is indexed from where the index stopped,
 * streamed line by line, and a file that shrank (a torn tail moved aside) is indexed again from its start.
 * A line is listed when the fields of its listing decode; the whole trace is decoded when it is read (a line
 * damaged elsewhere is then Corrupt, naming its place). The newest traces (a list with a limit and no other filter,
 * what every start reads) come from the ends of the newest month files, without the index; any other list with a
 * limit reads the months newest first and stops at it. Neither grows with the months of traces kept.
 */
const MONTH_FILE = /^\d{4}-\d{2}\.jsonl$/

const IndexFields = Schema.Struct({
  covered: Schema.Number,
  /** Lines of the file that are not traces (no listing decodes from them: counted, so that a list can say so). */
  skipped: Schema.Number,
  traces: Schema.Array(TraceListing)
})
type IndexFile = typeof IndexFields.Type
const IndexFile = Schema.parseJson(IndexFields)
// The index is this module's own writing: parsed, then checked by a walk of the schema that allocates nothing (a
// month of 20,000 traces, 5.4 MB: about 25 ms to parse and 5 to check, against about 85 for the decoder's copy).
const isIndex = onFirstCall(() => exactCheck(IndexFields.ast))
const encodeIndex = onFirstCall(() => Schema.encodeSync(IndexFile))

const decodeListedFields = onFirstCall(() => Schema.decodeUnknownEither(ListedFields))

const ioError = (path: string, what: string) => (error: unknown) =>
  new TraceStoreError({ path, reason: "Io", message: `${what}: ${messageOf(error)}`, cause: error })

/** The listing of a line, undefined for a line that is not a trace (scanning decodes no more of it). */
const listingOfLine = (line: string, file: string, offset: number, length: number): TraceListing | undefined => {
  let json: unknown
  try {
    json = JSON.parse(line)
  } catch {
    return undefined
  }
  const plain = plainListing(json, file, offset, length)
  if (plain !== undefined) return plain
  const decoded = decodeListedFields(json)
  if (decoded._tag === "Left") return undefined
  return listingOf(decoded.right, file, offset, length)
}

/** The complete lines of `path` from byte `start`, streamed: their listings and the byte offset after the last. */
const scanFrom = (path: string, name: string, start: number) =>
  Effect.tryPromise({
    try: async () => {
      const listings: Array<TraceListing> = []
      let skipped = 0
      let offset = start
      // Node's line reader loads with the first trace file indexed, not with the store.
      const NodeReadline = await import("node:readline")
      const stream = NodeFs.createReadStream(path, { start })
      const lines = NodeReadline.createInterface({ input: stream, crlfDelay: Infinity })
      const size = (await NodeFs.promises.stat(path)).size
      for await (const line of lines) {
        const length = Buffer.byteLength(line) + 1
        // A last line without its newline is still being written: it is indexed next time.
        if (offset + length > size) break
        if (line !== "") {
          const listing = listingOfLine(line, name, offset, length - 1)
          if (listing === undefined) skipped++
          else listings.push(listing)
        }
        offset += length
      }
      return { listings, skipped, covered: offset }
    },
    catch: ioError(path, "cannot read the traces")
  })

/**
 * The listings of the last `limit` traces of the month file `name` (all of them when it holds fewer), oldest
 * first, and the lines read that are not traces: read from the file's end, neither reading nor writing the index.
 * A last line without its newline is still being written: left out, as indexing leaves it.
 */
const tailOf = (dir: string, name: string, limit: number) =>
  Effect.tryPromise({
    try: async () => {
      const newestFirst: Array<TraceListing> = []
      let skipped = 0
      await linesFromEnd(NodePath.join(dir, name), (line, start) => {
        if (line.length === 0) return true
        const listing = listingOfLine(line.toString("utf8"), name, start, line.length)
        if (listing === undefined) skipped++
        else newestFirst.push(listing)
        return newestFirst.length < limit
      })
      return { listings: newestFirst.reverse(), skipped }
    },
    catch: ioError(NodePath.join(dir, name), "cannot read the traces")
  })

const readIndex = (path: string): Effect.Effect<IndexFile | undefined> =>
  Effect.promise(() => NodeFs.promises.readFile(path, "utf8").catch(() => undefined)).pipe(
    Effect.map((text) => {
      if (text === undefined) return undefined
      let json: unknown
      try {
        json = JSON.parse(text)
      } catch {
        return undefined
      }
      // Anything else than what this module writes is no index: the traces are scanned again.
      return isIndex(json) ? json as IndexFile : undefined
    })
  )

const writeIndex = (path: string, index: IndexFile) =>
  Effect.tryPromise({
    try: async () => {
      await NodeFs.promises.mkdir(NodePath.dirname(path), { recursive: true, mode: OWNER_FOLDER })
      const temp = `${path}.${process.pid}.tmp`
      await NodeFs.promises.writeFile(temp, encodeIndex(index), { mode: OWNER_FILE })
      await NodeFs.promises.rename(temp, path)
    },
    catch: ioError(path, "cannot write the trace index")
  })

/** The index of one monthly file, brought up to date with the file. */
const monthIndex = (dir: string, name: string) =>
  Effect.gen(function*() {
    const file = NodePath.join(dir, name)
    const indexPath = NodePath.join(dir, "index", name.replace(/\.jsonl$/, ".idx"))
    const size = yield* Effect.tryPromise({
      try: async () => (await NodeFs.promises.stat(file)).size,
      catch: ioError(file, "cannot read the traces")
    })
    const known = yield* readIndex(indexPath)
    const base = known !== undefined && known.covered <= size ? known : { covered: 0, skipped: 0, traces: [] }
    if (base.covered === size) return base
    const scanned = yield* scanFrom(file, name, base.covered)
    if (scanned.covered === base.covered) return base
    const index: IndexFile = {
      covered: scanned.covered,
      skipped: base.skipped + scanned.skipped,
      traces: [...base.traces, ...scanned.listings]
    }
    // The index is a cache: when it cannot be written, the next reader scans again.
    yield* writeIndex(indexPath, index).pipe(Effect.catchAll((error) => Effect.logWarning(error.message)))
    return index
  })

const monthFiles = (dir: string) =>
  Effect.tryPromise({
    try: () =>
      NodeFs.promises.readdir(dir).catch((error: NodeJS.ErrnoException) => {
        if (error.code === "ENOENT") return [] as Array<string>
        throw error
      }),
    catch: ioError(dir, "cannot list the traces")
  }).pipe(Effect.map((names) => names.filter((name) => MONTH_FILE.test(name)).sort()))

/**
 * The listings of the folder's traces that match `filter`, oldest first (the newest `limit` when given), and the
 * lines that are not traces in the months read. Months are read newest first, and no further once `limit`
 * listings are found; the newest `limit` of every session are read from the files' ends, without the index.
 */
export const listTraces = (dir: string, filter: TraceFilter = {}) =>
  Effect.gen(function*() {
    const names = yield* monthFiles(dir)
    const sinceMonth = filter.since === undefined ? undefined : new Date(filter.since).toISOString().slice(0, 7)
    const limit = filter.limit === undefined ? undefined : Math.floor(filter.limit)
    const months: Array<ReadonlyArray<TraceListing>> = []
    let found = 0
    let skipped = 0
    if (limit !== undefined && filter.sessionId === undefined && filter.since === undefined) {
      // The newest traces whoever they belong to: the ends of the newest files, without the index.
      for (let i = names.length - 1; i >= 0 && found < limit; i--) {
        const tail = yield* tailOf(dir, names[i]!, limit - found)
        months.push(tail.listings)
        found += tail.listings.length
        skipped += tail.skipped
      }
      return { traces: months.reverse().flat(), skipped }
    }
    for (let i = names.length - 1; i >= 0; i--) {
      // `limit` listings found (none asked for: a limit below 1, or not a number, lists nothing).
      if (limit !== undefined && !(found < limit)) break
      const name = names[i]!
      // A month file holds the traces started that month: older months cannot match `since`.
      if (sinceMonth !== undefined && name.slice(0, 7) < sinceMonth) break
      const index = yield* monthIndex(dir, name)
      skipped += index.skipped
      const matching = index.traces.filter((listing) => matchesFilter(listing, filter))
      months.push(matching)
      found += matching.length
    }
    const listings = months.reverse().flat()
    return {
      traces: limit === undefined ? listings : lastTurns(listings, limit),
      skipped
    }
  })

/** The trace with this id (or None), read from its own line; a line that no longer decodes is Corrupt. */
export const findTrace = (dir: string, traceId: string) =>
  Effect.gen(function*() {
    const names = yield* monthFiles(dir)
    // Newest month first: the trace asked for is most often recent.
    for (const name of names.reverse()) {
      const index = yield* monthIndex(dir, name)
      const listing = index.traces.find((entry) => entry.trace_id === traceId)
      if (listing === undefined) continue
      const stored = yield* readLine(NodePath.join(dir, name), listing)
      return yield* restoreAside(dir, stored)
    }
    return undefined
  })

const readLine = (file: string, listing: TraceListing) =>
  Effect.gen(function*() {
    const text = yield* Effect.tryPromise({
      try: async () => {
        const handle = await NodeFs.promises.open(file, "r")
        try {
          const buffer = Buffer.alloc(listing.length)
          await handle.read(buffer, 0, listing.length, listing.offset)
          return buffer.toString("utf8")
        } finally {
          await handle.close()
        }
      },
      catch: ioError(file, "cannot read the trace")
    })
    const corrupt = new TraceStoreError({
      path: `${file}@${listing.offset}`,
      reason: "Corrupt",
      message: `the line of trace ${listing.trace_id} changed since it was indexed; delete the index folder`
    })
    const json = yield* Effect.try({ try: (): unknown => JSON.parse(text), catch: () => corrupt })
    const trace: ExecutionTrace = yield* Effect.mapError(decodeTrace(json), () => corrupt)
    if (trace.trace_id !== listing.trace_id) return yield* corrupt
    return trace
  })
