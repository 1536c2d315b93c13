import type { SqlClient } from "@effect/sql"
import { Effect, type Scope } from "effect"
import type { Worker } from "node:worker_threads"
import { messageOf } from "../domain/Errors.js"
import { sqliteDriverPath } from "./SqliteDriver.js"

/**
 * The worker: its own connection to the database, and a PASSIVE checkpoint each time it is asked (it copies what
 * the WAL holds into the database file and syncs it, beside the writer, never blocking it), answered with
 * SQLite's figures. CommonJS, run from this text: no file to find next to a bundle.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads")
const Database = require(workerData.driver)
const db = new Database(workerData.file, { fileMustExist: true })
db.pragma("synchronous = " + workerData.synchronous)
parentPort.on("message", (message) => {
  if (message === "close") {
    db.close()
    parentPort.close()
    return
  }
  try {
    const [result] = db.pragma("wal_checkpoint(PASSIVE)")
    parentPort.postMessage({ _tag: "Checkpointed", log: result.log, checkpointed: result.checkpointed })
  } catch (error) {
    parentPort.postMessage({ _tag: "Failed", message: String((error && error.message) || error) })
  }
})
parentPort.postMessage({ _tag: "Ready" })
`

/** Loaded when the worker starts: a short-lived process does not load Node's worker modules. */
const loadWorkerThreads = () => import("node:worker_threads")

type FromWorker =
  | { readonly _tag: "Ready" }
  | { readonly _tag: "Checkpointed"; readonly log: number; readonly checkpointed: number }
  | { readonly _tag: "Failed"; readonly message: string }

/** SQLite's own threshold: a commit that leaves this many frames in the WAL checkpoints in the committing thread. */
export const SQLITE_AUTOCHECKPOINT = 1000

export interface WalCheckpointerOptions {
  /** The database file (in WAL mode, written by this process's connection). */
  readonly file: string
  /** The `synchronous` setting of the checkpoints: the writer's own, so that they sync as its would. */
  readonly synchronous: "NORMAL" | "FULL"
  /** Writes committed before the worker is started: a short-lived process never reaches SQLite's threshold. */
  readonly startAfter?: number | undefined
  /** Writes between two checkpoints asked of the worker. */
  readonly every?: number | undefined
  /**
   * When a checkpoint finds at least this many frames in the WAL (writes kept landing while it ran, so the WAL is
   * never emptied), the next write checkpoints in the writer's thread, as SQLite would have: the WAL stays bounded.
   */
  readonly maxFrames?: number | undefined
  /** The driver the worker loads (tests give a wrong one to see the fallback). */
  readonly driver?: string | undefined
}

/** Who checkpoints the WAL now: SQLite in the writer's thread (at start, and for good if the worker failed), or the worker. */
export type CheckpointMode = "sqlite" | "worker" | "fallback"

export interface WalCheckpointerState {
  readonly mode: CheckpointMode
  /** Checkpoints the worker completed. */
  readonly checkpoints: number
  /** SQLite's figures from the last one: frames in the WAL, frames copied into the database. */
  readonly log: number
  readonly checkpointed: number
  /** Checkpoints made in the writer's thread because the WAL had grown past `maxFrames`. */
  readonly catchUps: number
}

export interface WalCheckpointer {
  /** After each write this process commits: starts the worker or asks it for a checkpoint; never waits for one. */
  readonly committed: Effect.Effect<void>
  /** The state once the worker, if started, is ready (or has failed) and no checkpoint asked of it is running. */
  readonly settled: Effect.Effect<WalCheckpointerState>
}

/**
 * Moves the WAL checkpoints of a database this process writes to a worker thread. SQLite checkpoints in the
 * thread that commits, every 1000 pages or so: it copies the pages and syncs the database file there, which
 * blocks the event loop for milliseconds (the slowest turns of a busy process were those). Once the process has
 * committed `startAfter` writes, a worker opens its own connection; when it is ready the writer's automatic
 * checkpoints are turned off and the worker is asked for a PASSIVE checkpoint every `every` writes. Durability
 * is unchanged: the worker's checkpoints sync as the writer's would have. If the worker fails, the writer's
 * automatic checkpoints come back (and a warning says why); when the scope closes the worker's connection closes
 * first, and the writer's own close checkpoints what is left.
 */
export const makeWalCheckpointer = (
  sql: SqlClient.SqlClient,
  options: WalCheckpointerOptions
): Effect.Effect<WalCheckpointer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const startAfter = options.startAfter ?? 100
    const every = options.every ?? 50
    const maxFrames = options.maxFrames ?? 4 * SQLITE_AUTOCHECKPOINT
    let mode: CheckpointMode = "sqlite"
    let worker: Worker | undefined
    let starting = false
    let ready = false
    let failure: string | undefined
    let exited = false
    let writes = 0
    let askedAt = 0
    let inFlight = false
    let catchUp = false
    let checkpoints = 0
    let log = 0
    let checkpointed = 0
    let catchUps = 0
    const waiters: Array<() => void> = []
    const exitWaiters: Array<() => void> = []

    const state = (): WalCheckpointerState => ({ mode, checkpoints, log, checkpointed, catchUps })
    const busy = () => inFlight || (worker !== undefined && !ready && failure === undefined)
    const wakeAll = () => {
      for (const wake of waiters.splice(0)) wake()
    }
    const fail = (why: string) => {
      failure ??= why
      inFlight = false
      wakeAll()
    }

    const start = (threads: typeof import("node:worker_threads")) => {
      try {
        const driver = options.driver ?? sqliteDriverPath()
        const started = new threads.Worker(WORKER_SOURCE, {
          eval: true,
          workerData: { driver, file: options.file, synchronous: options.synchronous }
        })
        started.unref()
        started.on("message", (message: FromWorker) => {
          if (message._tag === "Ready") {
            ready = true
            wakeAll()
          } else if (message._tag === "Checkpointed") {
            checkpoints += 1
            log = message.log
            checkpointed = message.checkpointed
            if (log >= maxFrames) catchUp = true
            inFlight = false
            wakeAll()
          } else {
            fail(`a checkpoint failed: ${message.message}`)
          }
        })
        started.on("error", (error) => fail(messageOf(error)))
        started.on("exit", (code) => {
          exited = true
          for (const wake of exitWaiters.splice(0)) wake()
          fail(`the worker stopped (exit code ${code})`)
        })
        worker = started
      } catch (error) {
        fail(messageOf(error))
      }
    }

    const ask = () => {
      askedAt = writes
      inFlight = true
      worker!.postMessage("checkpoint")
    }

    const pragma = (statement: string) =>
      sql.unsafe(statement).pipe(
        Effect.asVoid,
        Effect.catchAll((error) => Effect.logWarning(`${options.file}: ${statement} failed: ${error.message}`))
      )

    const committed = Effect.suspend(() => {
      writes += 1
      if (mode === "fallback") return Effect.void
      if (failure !== undefined) {
        const why = failure
        mode = "fallback"
        return Effect.zipRight(
          pragma(`PRAGMA wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT}`),
          Effect.logWarning(`${options.file}: checkpoints are back in the writer's thread: ${why}`)
        )
      }
      if (mode === "sqlite") {
        if (!starting && writes >= startAfter) {
          starting = true
          return Effect.promise(loadWorkerThreads).pipe(
            Effect.map(start),
            Effect.catchAllDefect((error) => Effect.sync(() => fail(messageOf(error))))
          )
        }
        if (!ready) return Effect.void
        mode = "worker"
        return Effect.zipRight(pragma("PRAGMA wal_autocheckpoint = 0"), Effect.sync(ask))
      }
      if (catchUp) {
        catchUp = false
        catchUps += 1
        return pragma("PRAGMA wal_checkpoint(PASSIVE)")
      }
      if (!inFlight && writes - askedAt >= every) ask()
      return Effect.void
    })

    const settled = Effect.async<WalCheckpointerState>((resume) => {
      if (!busy()) resume(Effect.sync(state))
      else waiters.push(() => resume(Effect.sync(state)))
    })

    yield* Effect.addFinalizer(() =>
      Effect.async<void>((resume) => {
        if (worker === undefined || exited) return resume(Effect.void)
        exitWaiters.push(() => resume(Effect.void))
        worker.postMessage("close")
      })
    )

    return { committed, settled }
  })
