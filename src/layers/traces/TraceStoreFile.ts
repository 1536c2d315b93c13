import { DateTime, Deferred, Effect, Layer, Queue, Schema } from "effect"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { messageOf, TraceStoreError } from "../../domain/Errors.js"
import { ExecutionTrace, traceToJson } from "../../domain/ExecutionTrace.js"
import { MyclawConfig } from "../../services/MyclawConfig.js"
import { type PastTurn, pastTurnOf, TraceStore } from "../../services/TraceStore.js"
import { Workspace } from "../../services/Workspace.js"

interface Pending {
  readonly file: string
  readonly line: string
  readonly done: Deferred.Deferred<void, TraceStoreError>
}

const KEEP_TURNS = 20
const decodeTraceEither = Schema.decodeUnknownEither(ExecutionTrace)

const ioError = (path: string, what?: string) => (error: unknown) =>
  new TraceStoreError({
    path,
    reason: "Io",
    message: what === undefined ? messageOf(error) : `${what}: ${messageOf(error)}`,
    cause: error
  })

/** Under `fsync: "batch"`, how often written traces are synced to the disk. */
const SYNC_INTERVAL = "200 millis"
/** Sessions whose recent turns are kept in memory; the least recently used beyond this are forgotten. */
const MAX_SESSIONS = 10_000

/**
 * Closed traces as JSON lines in `<workspace>/.audit/traces/YYYY-MM.jsonl`, appended by one writer fiber
 * through a file handle kept open. `fsync: "always"`: `persist` returns once its line is synced to the disk.
 * `"batch"` (group commit): the traces waiting in the queue are written together and `persist` returns once
 * they are in the file (a crash of myclaw loses nothing); one sync every 200 ms covers them all, so a power
 * loss can lose at most that window.
 */
export const makeTraceStoreFile = (dir: string, fsync: "always" | "batch") =>
  Effect.gen(function*() {
    yield* Effect.tryPromise({
      try: () => NodeFs.mkdir(dir, { recursive: true }),
      catch: ioError(dir)
    })
    const queue = yield* Effect.acquireRelease(Queue.unbounded<Pending>(), Queue.shutdown)
    const handles = new Map<string, NodeFs.FileHandle>()
    const unsynced = new Set<NodeFs.FileHandle>()

    const handleFor = async (file: string) => {
      const open = handles.get(file)
      if (open !== undefined) return open
      for (const [other, handle] of handles) {
        if (unsynced.delete(handle)) await handle.datasync()
        await handle.close()
        handles.delete(other)
      }
      const handle = await NodeFs.open(file, "a")
      handles.set(file, handle)
      return handle
    }

    const append = (file: string, lines: string) =>
      Effect.tryPromise({
        try: async () => {
          const handle = await handleFor(file)
          await handle.appendFile(lines)
          if (fsync === "always") await handle.datasync()
          else unsynced.add(handle)
        },
        catch: ioError(file, "cannot append the trace")
      })

    const sync = Effect.tryPromise({
      try: async () => {
        const pending = [...unsynced]
        unsynced.clear()
        await Promise.all(pending.map((handle) => handle.datasync()))
      },
      catch: ioError(dir, "cannot sync the traces")
    }).pipe(Effect.catchAll((error) => Effect.logError(error.message)))

    const writeBatch = (batch: ReadonlyArray<Pending>) => {
      const byFile = new Map<string, Array<Pending>>()
      for (const item of batch) {
        const group = byFile.get(item.file)
        if (group === undefined) byFile.set(item.file, [item])
        else group.push(item)
      }
      return Effect.forEach(byFile, ([file, items]) =>
        append(file, items.map((item) => item.line).join("")).pipe(
          Effect.exit,
          Effect.flatMap((exit) => Effect.forEach(items, (item) => Deferred.done(item.done, exit)))
        ), { discard: true })
    }

    const writer = Effect.gen(function*() {
      const first = yield* Queue.take(queue)
      const batch = fsync === "always" ? [first] : [first, ...(yield* Queue.takeAll(queue))]
      yield* Effect.uninterruptible(writeBatch(batch))
    })
    // Finalizers run in reverse: the writer and the syncer stop first, then what is still queued is
    // written, synced, and the file closed.
    yield* Effect.addFinalizer(() =>
      Queue.takeAll(queue).pipe(
        Effect.flatMap((rest) => writeBatch([...rest])),
        Effect.zipRight(sync),
        Effect.zipRight(Effect.promise(() => Promise.all([...handles.values()].map((handle) => handle.close())))),
        Effect.ignore
      )
    )
    yield* Effect.forkScoped(Effect.forever(writer))
    if (fsync === "batch") {
      yield* Effect.forkScoped(
        Effect.forever(Effect.zipRight(Effect.sleep(SYNC_INTERVAL), Effect.uninterruptible(sync)))
      )
    }

    const sessions = yield* loadRecentSessions(dir)
    const remember = (trace: ExecutionTrace) => {
      const turns = sessions.get(trace.session_id) ?? []
      turns.push(pastTurnOf(trace))
      if (turns.length > KEEP_TURNS) turns.shift()
      sessions.delete(trace.session_id)
      sessions.set(trace.session_id, turns)
      if (sessions.size > MAX_SESSIONS) sessions.delete(sessions.keys().next().value!)
    }

    const persist = (trace: ExecutionTrace) =>
      Effect.gen(function*() {
        const file = NodePath.join(dir, `${DateTime.formatIso(trace.started_at).slice(0, 7)}.jsonl`)
        const done = yield* Deferred.make<void, TraceStoreError>()
        yield* Queue.offer(queue, { file, line: traceToJson(trace) + "\n", done })
        yield* Deferred.await(done)
        remember(trace)
      })

    const recentTurns = (sessionId: string, limit: number) =>
      Effect.sync(() => sessions.get(sessionId)?.slice(-limit) ?? [])

    return TraceStore.of({ persist, recentTurns })
  })

/**
 * The last turns of every session seen in the two newest monthly files, read once at start so that a turn
 * never scans the files; sessions idle for longer start without verbatim history.
 */
const loadRecentSessions = (dir: string) =>
  Effect.gen(function*() {
    const sessions = new Map<string, Array<PastTurn>>()
    const names = yield* Effect.tryPromise({
      try: () => NodeFs.readdir(dir),
      catch: ioError(dir)
    })
    for (const name of names.filter((n) => /^\d{4}-\d{2}\.jsonl$/.test(n)).sort().slice(-2)) {
      const file = NodePath.join(dir, name)
      const text = yield* Effect.tryPromise({
        try: () => NodeFs.readFile(file, "utf8"),
        catch: ioError(file)
      })
      let unreadable = 0
      for (const line of text.split("\n")) {
        if (line === "") continue
        const trace = parseTrace(line)
        if (trace === undefined) {
          unreadable++
          continue
        }
        const turns = sessions.get(trace.session_id) ?? []
        turns.push(pastTurnOf(trace))
        if (turns.length > KEEP_TURNS) turns.shift()
        sessions.set(trace.session_id, turns)
      }
      if (unreadable > 0) yield* Effect.logWarning(`${file}: ${unreadable} lines are not traces and were skipped`)
    }
    return sessions
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
        traces.push(trace)
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
