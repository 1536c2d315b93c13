import { DateTime, Deferred, Effect, Layer, Queue, Schema } from "effect"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { TraceStoreError } from "../domain/Errors.js"
import { ExecutionTrace, traceToJson } from "../domain/ExecutionTrace.js"
import { MyclawConfig } from "../services/MyclawConfig.js"
import { type PastTurn, TraceStore } from "../services/TraceStore.js"
import { Workspace } from "../services/Workspace.js"

interface Pending {
  readonly file: string
  readonly line: string
  readonly done: Deferred.Deferred<void, TraceStoreError>
}

const KEEP_TURNS = 20
const decodeTraceEither = Schema.decodeUnknownEither(ExecutionTrace)

/**
 * Closed traces as JSON lines in `<workspace>/.audit/traces/YYYY-MM.jsonl`, appended by one writer fiber.
 * `fsync: "always"` writes and syncs each trace alone; `"batch"` (group commit) writes every trace waiting
 * in the queue with one write and one sync per file. Either way `persist` returns once its line is durable.
 */
export const makeTraceStoreFile = (dir: string, fsync: "always" | "batch") =>
  Effect.gen(function*() {
    yield* Effect.tryPromise({
      try: () => NodeFs.mkdir(dir, { recursive: true }),
      catch: (error) => new TraceStoreError({ path: dir, message: String(error) })
    })
    const queue = yield* Effect.acquireRelease(Queue.unbounded<Pending>(), Queue.shutdown)

    const append = (file: string, lines: string) =>
      Effect.tryPromise({
        try: async () => {
          const handle = await NodeFs.open(file, "a")
          try {
            await handle.appendFile(lines)
            await handle.datasync()
          } finally {
            await handle.close()
          }
        },
        catch: (error) => new TraceStoreError({ path: file, message: `cannot append the trace: ${String(error)}` })
      })

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
    // On close, after the writer stops (finalizers run in reverse), whatever is still queued is written.
    yield* Effect.addFinalizer(() => Effect.flatMap(Queue.takeAll(queue), (rest) => writeBatch([...rest])))
    yield* Effect.forkScoped(Effect.forever(writer))

    const sessions = yield* loadRecentSessions(dir)
    const remember = (trace: ExecutionTrace) => {
      const turn = { userMessage: trace.user_message, finalResponse: trace.final_response }
      const turns = sessions.get(trace.session_id)
      if (turns === undefined) return sessions.set(trace.session_id, [turn])
      turns.push(turn)
      if (turns.length > KEEP_TURNS) turns.splice(0, turns.length - KEEP_TURNS)
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
      catch: (error) => new TraceStoreError({ path: dir, message: String(error) })
    })
    for (const name of names.filter((n) => /^\d{4}-\d{2}\.jsonl$/.test(n)).sort().slice(-2)) {
      const file = NodePath.join(dir, name)
      const text = yield* Effect.tryPromise({
        try: () => NodeFs.readFile(file, "utf8"),
        catch: (error) => new TraceStoreError({ path: file, message: String(error) })
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
        turns.push({ userMessage: trace.user_message, finalResponse: trace.final_response })
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
      catch: (error) => new TraceStoreError({ path: dir, message: String(error) })
    })
    const traces: Array<ExecutionTrace> = []
    for (const name of names.filter((n) => n.endsWith(".jsonl")).sort()) {
      const file = NodePath.join(dir, name)
      const text = yield* Effect.tryPromise({
        try: () => NodeFs.readFile(file, "utf8"),
        catch: (error) => new TraceStoreError({ path: file, message: String(error) })
      })
      const lines = text.split("\n")
      for (let i = 0; i < lines.length; i++) {
        if (lines[i] === "") continue
        const trace = parseTrace(lines[i]!)
        if (trace === undefined) {
          return yield* new TraceStoreError({ path: `${file}:${i + 1}`, message: "this line is not a valid trace" })
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
