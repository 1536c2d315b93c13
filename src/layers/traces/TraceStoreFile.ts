import { DateTime, Effect, Exit, Layer, Option, Schema } from "effect"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { messageOf, TraceStoreError } from "../../domain/Errors.js"
import { ExecutionTrace, traceToJson } from "../../domain/ExecutionTrace.js"
import { onFirstCall } from "../../domain/OnFirstCall.js"
import { OWNER_FILE, OWNER_FOLDER } from "../../domain/OwnerOnly.js"
import { MyclawConfig } from "../../services/MyclawConfig.js"
import { TraceStore } from "../../services/TraceStore.js"
import { Workspace } from "../../services/Workspace.js"
import { appendAll, makeBatchEncoder } from "../files/Append.js"
import { makeGroupCommit, type Reply } from "../files/GroupCommit.js"
import { restoreAside, storeAside } from "./Blobs.js"
import { findTrace, listTraces } from "./TraceIndex.js"

interface Write {
  readonly file: string
  /** The trace as one line of JSON, without the newline the writer adds. */
  readonly line: string
  readonly done: Reply<void, TraceStoreError>
}

const decodeTraceEither = onFirstCall(() => Schema.decodeUnknownEither(ExecutionTrace))

const ioError = (path: string, what?: string) => (error: unknown) =>
  new TraceStoreError({
    path,
    reason: "Io",
    message: what === undefined ? messageOf(error) : `${what}: ${messageOf(error)}`,
    cause: error
  })

/** Under `fsync: "batch"`, how often written traces are synced to the disk. */
const SYNC_INTERVAL = "200 millis"

/**
 * Closed traces as JSON lines in `<workspace>/.audit/traces/YYYY-MM.jsonl`, appended by one writer fiber
 * through a file handle kept open. `fsync: "always"`: `persist` returns once its line is synced to the disk.
 * `"batch"` (group commit): the traces waiting in the queue are written together and `persist` returns once
 * they are in the file (a crash of myclaw loses nothing); a sync every 200 ms covers them all, so a power
 * loss can lose at most that window. That sync runs beside the writer, not in its way: a disk that takes
 * milliseconds to sync does not hold up the traces written meanwhile.
 */
export const makeTraceStoreFile = (dir: string, fsync: "always" | "batch") =>
  Effect.gen(function*() {
    yield* Effect.tryPromise({
      try: () => NodeFs.mkdir(dir, { recursive: true, mode: OWNER_FOLDER }),
      catch: ioError(dir)
    })
    const handles = new Map<string, NodeFs.FileHandle>()
    const unsynced = new Set<NodeFs.FileHandle>()
    // A sync and a close of the files never overlap: a handle is not closed under a sync that has taken it.
    const syncing = yield* Effect.makeSemaphore(1)

    const closeHandles = async () => {
      for (const [file, handle] of handles) {
        handles.delete(file)
        unsynced.delete(handle)
        await handle.close()
      }
    }

    const sync = syncing.withPermits(1)(Effect.tryPromise({
      try: async () => {
        const pending = [...unsynced]
        unsynced.clear()
        await Promise.all(pending.map((handle) => handle.datasync()))
      },
      catch: ioError(dir, "cannot sync the traces")
    }))

    const handleFor = Effect.fnUntraced(function*(file: string) {
      const open = handles.get(file)
      if (open !== undefined) return open
      yield* syncing.withPermits(1)(Effect.tryPromise({
        try: async () => {
          for (const handle of unsynced) await handle.datasync()
          await closeHandles()
        },
        catch: ioError(dir, "cannot close the previous month's traces")
      }))
      const torn = yield* repairTornTail(file)
      if (torn > 0) {
        yield* Effect.logWarning(
          `${file}: a torn last line (${torn} bytes, a write cut short) was moved to ${file}.torn`
        )
      }
      const handle = yield* Effect.tryPromise({
        try: async () => {
          const opened = await NodeFs.open(file, "a", OWNER_FILE)
          // A month an earlier version began with the umask's mode.
          await opened.chmod(OWNER_FILE).catch(() => undefined)
          return opened
        },
        catch: ioError(file, "cannot open the traces")
      })
      handles.set(file, handle)
      return handle
    })

    // A batch of a few traces is written by the writer fiber itself (see appendAll); syncing is what takes time,
    // and under "batch" that is never done here.
    const encode = makeBatchEncoder()
    // A write that failed may have left part of a line: the files are closed, and so repaired when next opened.
    const closeAfterFailure = syncing.withPermits(1)(Effect.promise(() => closeHandles().catch(() => undefined)))
    // Chains, not generators, from here to the batch's answers: every trace is written through them, and a
    // generator's steps cost the writer fiber several runtime operations each. The lines are encoded as the write
    // runs: a batch's later file is encoded once the one before it is written.
    const appendTo = (handle: NodeFs.FileHandle, file: string, lines: ReadonlyArray<string>) =>
      Effect.matchEffect(Effect.suspend(() => appendAll(handle.fd, encode(lines, "\n"))), {
        onFailure: (error) =>
          Effect.zipRight(closeAfterFailure, Effect.fail(ioError(file, "cannot append the trace")(error))),
        onSuccess: () => {
          unsynced.add(handle)
          return Effect.void
        }
      })
    const append = (file: string, lines: ReadonlyArray<string>): Effect.Effect<void, TraceStoreError> => {
      const open = handles.get(file)
      return open !== undefined
        ? appendTo(open, file, lines)
        : Effect.flatMap(handleFor(file), (handle) => appendTo(handle, file, lines))
    }

    /** A batch's writes by file, in the order each file first comes: nearly always one month's, one file. */
    const byFile = (jobs: ReadonlyArray<Write>): ReadonlyArray<readonly [string, ReadonlyArray<Write>]> => {
      const first = jobs[0]!.file
      if (jobs.every((job) => job.file === first)) return [[first, jobs]]
      const groups = new Map<string, Array<Write>>()
      for (const job of jobs) {
        const group = groups.get(job.file)
        if (group === undefined) groups.set(job.file, [job])
        else group.push(job)
      }
      return [...groups]
    }

    type Outcome = readonly [ReadonlyArray<Write>, Exit.Exit<void, TraceStoreError>]
    /** Each write answered with its file's outcome; under `"always"`, a written file's with the sync's. */
    const answer = (outcomes: ReadonlyArray<Outcome>, synced?: Exit.Exit<void, TraceStoreError>) => {
      for (const [items, exit] of outcomes) {
        const outcome = synced !== undefined && Exit.isSuccess(exit) ? synced : exit
        for (const item of items) item.done(outcome)
      }
    }

    /**
     * One batch: each month's lines in one write, the files one after another (the encoder's buffer is reused);
     * under `"always"` one sync covers the batch before any `persist` of it returns.
     */
    const step = (jobs: ReadonlyArray<Write>): Effect.Effect<void> => {
      if (jobs.length === 0) return Effect.void
      const groups = byFile(jobs)
      const outcomes: Array<Outcome> = []
      const write = (index: number): Effect.Effect<void> => {
        const [file, items] = groups[index]!
        return Effect.flatMap(Effect.exit(append(file, items.map((item) => item.line))), (exit) => {
          outcomes.push([items, exit])
          if (index + 1 < groups.length) return write(index + 1)
          if (fsync === "always") return Effect.map(Effect.exit(sync), (synced) => answer(outcomes, synced))
          answer(outcomes)
          return Effect.void
        })
      }
      return write(0)
    }

    const commit = yield* makeGroupCommit<Write>({
      step,
      shutdown: sync.pipe(
        Effect.zipRight(syncing.withPermits(1)(Effect.promise(closeHandles))),
        Effect.catchAll((error) => Effect.logError(error.message)),
        Effect.catchAllDefect((defect) => Effect.logError("closing the traces", defect))
      )
    })
    if (fsync === "batch") {
      yield* Effect.forkScoped(
        Effect.forever(Effect.zipRight(
          Effect.sleep(SYNC_INTERVAL),
          sync.pipe(Effect.catchAll((error) => Effect.logError(error.message)))
        ))
      )
    }

    // A chain, not a generator: every turn persists its trace.
    const persist = (trace: ExecutionTrace): Effect.Effect<void, TraceStoreError> => {
      const file = NodePath.join(dir, `${DateTime.formatIso(trace.started_at).slice(0, 7)}.jsonl`)
      // Large results go aside first: the line that names them is written only once they are stored.
      return Effect.flatMap(storeAside(dir, trace, fsync === "always"), (stored) =>
        commit.request<void, TraceStoreError>(
          (done) => ({
            file,
            line: traceToJson(stored),
            done
          }),
          () => new TraceStoreError({ path: file, reason: "Io", message: "the trace store is closed" })
        ))
    }

    return TraceStore.of({
      persist,
      get: (traceId) => Effect.map(findTrace(dir, traceId), Option.fromNullable),
      list: (filter) => Effect.map(listTraces(dir, filter), (listed) => listed.traces)
    })
  })

/**
 * Cuts a last line without its newline (a write cut short by a crash) off the end of `file` and appends it to
 * `<file>.torn`, so the next trace starts on a line of its own and the fragment is kept for inspection.
 * Returns how many bytes were moved.
 */
export const repairTornTail = (file: string) =>
  Effect.tryPromise({
    try: async () => {
      const handle = await NodeFs.open(file, "r+").catch((error: NodeJS.ErrnoException) => {
        if (error.code === "ENOENT") return undefined
        throw error
      })
      if (handle === undefined) return 0
      try {
        const { size } = await handle.stat()
        if (size === 0) return 0
        const last = Buffer.alloc(1)
        await handle.read(last, 0, 1, size - 1)
        if (last[0] === 0x0a) return 0
        // Back from the end, a chunk at a time, to the last newline.
        const chunk = Buffer.alloc(64 * 1024)
        let end = size
        let cut = 0
        while (end > 0) {
          const start = Math.max(0, end - chunk.length)
          const { bytesRead } = await handle.read(chunk, 0, end - start, start)
          const newline = chunk.subarray(0, bytesRead).lastIndexOf(0x0a)
          if (newline >= 0) {
            cut = start + newline + 1
            break
          }
          end = start
        }
        const fragment = Buffer.alloc(size - cut)
        await handle.read(fragment, 0, fragment.length, cut)
        await NodeFs.appendFile(`${file}.torn`, Buffer.concat([fragment, Buffer.from("\n")]), { mode: OWNER_FILE })
        await handle.truncate(cut)
        await handle.datasync()
        return fragment.length
      } finally {
        await handle.close()
      }
    },
    catch: ioError(file, "cannot repair a torn last line")
  })

const parseTrace = (line: string): ExecutionTrace | undefined => {
  try {
    const decoded = decodeTraceEither(JSON.parse(line))
    return decoded._tag === "Right" ? decoded.right : undefined
  } catch {
    return undefined
  }
}

/** Every trace of the folder's monthly files, oldest first; a line that is not a trace is an error naming it. */
export const readTraces = (dir: string) =>
  Effect.gen(function*() {
    const names = yield* Effect.tryPromise({
      try: () => NodeFs.readdir(dir),
      catch: ioError(dir)
    })
    const traces: Array<ExecutionTrace> = []
    for (const name of names.filter((n) => n.endsWith(".jsonl")).sort()) {
      const file = NodePath.join(dir, name)
      const text = yield* Effect.tryPromise({
        try: () => NodeFs.readFile(file, "utf8"),
        catch: ioError(file)
      })
      const lines = text.split("\n")
      for (let i = 0; i < lines.length; i++) {
        if (lines[i] === "") continue
        const trace = parseTrace(lines[i]!)
        if (trace === undefined) {
          return yield* new TraceStoreError({
            path: `${file}:${i + 1}`,
            reason: "Corrupt",
            message: "this line is not a valid trace"
          })
        }
        traces.push(yield* restoreAside(dir, trace))
      }
    }
    return traces
  })

export const TraceStoreFile = Layer.scoped(
  TraceStore,
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const { config } = yield* MyclawConfig
    return yield* makeTraceStoreFile(NodePath.join(workspace.root, ".audit", "traces"), config.traces.fsync)
  })
)
