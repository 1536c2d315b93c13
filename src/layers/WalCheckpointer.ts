import { Data, Effect, Runtime, type Scope } from "effect"
import { Worker } from "node:worker_threads"
import { messageOf } from "../domain/Errors.js"
import { sqliteDriverPath } from "./SqliteDriver.js"

/** What a passive checkpoint reports: frames in the log, and how many of them are now in the database file. */
export interface CheckpointResult {
  /** The checkpoint could not finish (another connection was checkpointing). */
  readonly busy: boolean
  readonly log: number
  readonly checkpointed: number
  /**
   * The passes the thread has run so far, this one included: those `wrote` asked for, which are not answered, and
   * `checkpoint`'s. They run in the order they were asked for.
   */
  readonly passes: number
}

/** The checkpointing thread could not start, open the database, or checkpoint it. */
export class WalCheckpointError extends Data.TaggedError("WalCheckpointError")<{
  readonly file: string
  readonly message: string
}> {}

/**
 * Folds a SQLite database's write-ahead log into the database file from a thread of its own. SQLite's automatic
 * checkpoint runs inside the commit that grows the log past 1,000 pages: that commit copies them all into the
 * database file and syncs both, milliseconds during which the event loop stands still (a turn every few hundred
 * has to wait for it, and so does every other request). Here a worker thread, with a connection of its own, runs a
 * passive checkpoint (it never waits for, nor stops, the writer) after every `every` rows written; the automatic
 * checkpoint stays on, and finds only the pages written since the worker's last pass, so it still ends the log
 * (a checkpoint that catches up lets the next write start the log again from its beginning) and still bounds it
 * if the worker cannot run.
 *
 * The worker starts at the first checkpoint asked for, so that a command that writes a few times never starts
 * it; it does not keep the process alive. When the scope closes, the worker closes its connection and ends,
 * before the writer's connection closes (the last connection to close folds in what is left and removes the log).
 * A worker that fails is reported once as a warning; the automatic checkpoint goes on as without it.
 */
export interface WalCheckpointer {
  /**
   * Counts a committed write of `rows` rows (one by default): the pages a write adds grow with its rows, so a
   * statement of many rows counts as many. Every `every` rows, asks the worker for a pass. Synchronous, and cheap.
   */
  readonly wrote: (rows?: number) => void
  /** A passive checkpoint by the worker, answered when it is done. */
  readonly checkpoint: Effect.Effect<CheckpointResult, WalCheckpointError>
}

/**
 * Rows written between two passes of the worker. A turn's row adds four or five pages: the automatic checkpoint,
 * at 1,000, finds at most about 150 not yet folded in, where it would have copied them all.
 */
export const WRITES_PER_CHECKPOINT = 32

// The worker's program, CommonJS run from text: what it loads is named by the data it is given.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads")
let db
let passes = 0
try {
  const Database = require(workerData.driver)
  db = new Database(workerData.file, { fileMustExist: true })
} catch (error) {
  parentPort.postMessage({ kind: "failed", message: String(error && error.message || error) })
}
parentPort.on("message", (request) => {
  if (request.kind === "close") {
    if (db !== undefined) db.close()
    parentPort.close()
    return
  }
  if (db === undefined) return
  try {
    const [row] = db.pragma("wal_checkpoint(PASSIVE)")
    passes += 1
    // Only a pass someone waits for is answered: each answer is work for the writer's thread.
    if (request.id !== undefined) {
      parentPort.postMessage({ kind: "done", id: request.id, busy: row.busy, log: row.log, checkpointed: row.checkpointed, passes })
    }
  } catch (error) {
    parentPort.postMessage({ kind: "failed", id: request.id, message: String(error && error.message || error) })
  }
})
`

type Reply =
  | {
    readonly kind: "done"
    readonly id: number
    readonly busy: number
    readonly log: number
    readonly checkpointed: number
    readonly passes: number
  }
  | { readonly kind: "failed"; readonly id?: number; readonly message: string }

const isReply = (value: unknown): value is Reply => {
  if (typeof value !== "object" || value === null) return false
  const reply = value as Record<string, unknown>
  return reply.kind === "done"
    ? typeof reply.id === "number" && typeof reply.busy === "number" && typeof reply.log === "number" &&
      typeof reply.checkpointed === "number" && typeof reply.passes === "number"
    : reply.kind === "failed" && typeof reply.message === "string"
}

type Answer = (outcome: Effect.Effect<CheckpointResult, WalCheckpointError>) => void

export const makeWalCheckpointer = (
  file: string,
  options: { readonly every?: number } = {}
): Effect.Effect<WalCheckpointer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const every = options.every ?? WRITES_PER_CHECKPOINT
    const runtime = yield* Effect.runtime<never>()
    let worker: Worker | undefined
    let failure: WalCheckpointError | undefined
    let exited: Promise<void> = Promise.resolve()
    let writes = 0
    let nextId = 0
    // Passes waited for and not yet answered, by id.
    const waiting = new Map<number, Answer>()

    const fail = (message: string) => {
      if (failure !== undefined) return
      failure = new WalCheckpointError({ file, message })
      for (const answer of waiting.values()) answer(Effect.fail(failure))
      waiting.clear()
      // A thread that is still running (its database could not be opened, or a checkpoint failed) is stopped.
      void worker?.terminate()
      Runtime.runFork(runtime)(
        Effect.logWarning(
          `${file}: its log is checkpointed by each commit that fills it, as without a worker: ${message}`
        )
      )
    }

    const start = (): Worker | undefined => {
      if (failure !== undefined) return undefined
      if (worker !== undefined) return worker
      try {
        const started = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver: sqliteDriverPath(), file } })
        started.unref()
        started.on("message", (reply: unknown) => {
          if (!isReply(reply)) return fail(`the checkpointing thread answered ${JSON.stringify(reply)}`)
          if (reply.kind === "failed") return fail(reply.message)
          const answer = waiting.get(reply.id)
          waiting.delete(reply.id)
          answer?.(Effect.succeed({
            busy: reply.busy !== 0,
            log: reply.log,
            checkpointed: reply.checkpointed,
            passes: reply.passes
          }))
        })
        started.on("error", (error) => fail(`the checkpointing thread failed: ${messageOf(error)}`))
        exited = new Promise((resolve) =>
          started.once("exit", (code) => {
            worker = undefined
            fail(`the checkpointing thread ended (exit code ${code})`)
            resolve()
          })
        )
        worker = started
      } catch (error) {
        fail(`cannot start the checkpointing thread: ${messageOf(error)}`)
      }
      return worker
    }

    yield* Effect.addFinalizer(() =>
      Effect.promise(() => {
        // Ended on purpose: not a failure to report.
        failure ??= new WalCheckpointError({ file, message: "closed" })
        for (const answer of waiting.values()) answer(Effect.fail(failure))
        waiting.clear()
        worker?.postMessage({ kind: "close" })
        return exited
      })
    )

    const wrote = (rows = 1) => {
      writes += rows
      if (writes < every) return
      writes = 0
      start()?.postMessage({ kind: "checkpoint" })
    }

    const checkpoint = Effect.async<CheckpointResult, WalCheckpointError>((resume) => {
      const running = start()
      if (running === undefined) {
        resume(Effect.fail(failure ?? new WalCheckpointError({ file, message: "not started" })))
        return
      }
      const id = nextId++
      waiting.set(id, resume)
      running.postMessage({ kind: "checkpoint", id })
      return Effect.sync(() => {
        waiting.delete(id)
      })
    })

    return { wrote, checkpoint }
  })
