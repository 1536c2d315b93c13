import { Clock, Effect, Exit, Fiber, Scope } from "effect"
import { auditFileOf } from "../../domain/AuditQuery.js"
import type { AuditRecord } from "../../domain/AuditRecord.js"
import { AuditError } from "../../domain/Errors.js"
import { isoAt as iso } from "../../domain/Time.js"
import type { Reply } from "../files/GroupCommit.js"
import { type AppendBytes, makeChainFiles } from "./ChainFiles.js"
import { type CheckpointReason, makeCheckpointWriter } from "./Checkpoints.js"
import { loadHeads, newHead, type Repair } from "./Heads.js"
import { epochOf, type KeyStore } from "./Keys.js"
import { compressMonth } from "./Rotation.js"
import { chainOfFile, MONTHLY_CHAIN } from "./Seal.js"
import { acquireWriterLock, awaitTaker, handoffRequested, WAIT_SPACING_MS } from "./WriterLock.js"

/**
 * The single writer: every append goes through one queue and one fiber, so lines never interleave and each
 * chain's seq and prev follow the order of the file. The fiber takes what is queued as one batch (group
 * commit), writes each chain's lines with one write of whole lines, syncs (`fsync: "always"`) and checkpoints
 * (after an approval, a denial or an override) before it answers. A failed write is cut back to the last whole
 * line and reported: never a silent success.
 *
 * What only bounds how long records wait for the disk (the periodic sync under `fsync: "batch"`, the checkpoint
 * every 100 records or 60 s) runs beside the writer, one at a time: a sync takes milliseconds, and the appends
 * that come meanwhile need not wait for it. A checkpoint's heads are those of the moment it is started, and its
 * line is sealed then (the key may move on to the next epoch before it is written); it is written once the files
 * are synced. Whatever else touches the checkpoints or closes the files waits for it first.
 *
 * Writing happens in sessions: the first append takes the folder's lock and reads where every chain, the
 * key and the checkpoints stand (cutting a torn last line); after `IDLE_MS` without appends the session ends
 * and the lock is released, so that another myclaw process (a CLI command next to `serve`) can write too. A
 * process waiting for the lock (`writer.wait`) is let in after the first batch written once its request is
 * looked for (at most once per retry of the waiter), or at the next release tick when no batch comes.
 */
export type Job =
  | { readonly _tag: "Append"; readonly record: AuditRecord; readonly done: Reply<void, AuditError> }
  | { readonly _tag: "Tick"; readonly what: Timer | "epoch" }
  | { readonly _tag: "Snapshot"; readonly done: Reply<ReadonlyMap<string, number>, never> }
  | { readonly _tag: "Probe"; readonly done: Reply<void, AuditError> }

type Append = Extract<Job, { _tag: "Append" }>
export type Timer = "checkpoint" | "sync" | "release"

export interface WriterOptions {
  readonly auditDir: string
  readonly keys: KeyStore
  readonly checkpointFile: string
  readonly fsync: "always" | "batch"
  /** Held while a month is compressed, so that readers never see a file vanish under them. */
  readonly filesLock: Effect.Semaphore
  /**
   * Asks for a tick later: a checkpoint within 60 s, a sync within the batch interval, a release when idle. A plain
   * call, not an effect: every batch arms its timers.
   */
  readonly arm: (what: Timer) => void
  /** How a batch's bytes reach its file (a plain write by default). */
  readonly appendBytes?: AppendBytes | undefined
}

const CHECKPOINT_EVERY = 100
export const IDLE_MS = 250

const triggerOf = (record: AuditRecord): CheckpointReason | undefined =>
  record.kind === "approval" && record.event === "verdict"
    ? "approval"
    : record.kind === "tool_decision" && record.decision === "deny"
    ? "denial"
    : record.kind === "budget_override"
    ? "budget_override"
    : undefined

export const makeWriter = (options: WriterOptions) =>
  Effect.gen(function*() {
    const { auditDir, keys } = options
    const files = yield* makeChainFiles(auditDir, options.appendBytes)

    const open = Effect.gen(function*() {
      const scope = yield* Scope.make()
      return yield* Effect.gen(function*() {
        yield* Scope.extend(acquireWriterLock(auditDir), scope)
        const loaded = yield* loadHeads(auditDir)
        let key = yield* keys.load
        if (key === undefined && loaded.hasRecords) {
          return yield* new AuditError({
            path: keys.keyFile,
            reason: "KeyMissing",
            message: `${auditDir} holds signed records but the audit key is missing: restore ${keys.keyDir} ` +
              "(or point MYCLAW_KEY_DIR at it); a new key would hide whatever happened to the old one"
          })
        }
        const now = yield* Clock.currentTimeMillis
        key = key === undefined ? yield* keys.create(epochOf(now)) : yield* keys.advance(key, epochOf(now))
        const checkpoints = yield* Scope.extend(makeCheckpointWriter(options.checkpointFile), scope)
        const repairs: Array<Repair> = [...loaded.repairs]
        if (checkpoints.cut > 0) {
          const detail = "a torn last checkpoint was cut"
          repairs.push({ file: options.checkpointFile, bytes: checkpoints.cut, detail })
        }
        for (const repair of repairs) yield* Effect.logWarning(`audit: ${repair.file}: ${repair.detail}`)
        return {
          scope,
          heads: loaded.heads,
          checkpoints,
          key,
          sinceCheckpoint: 0,
          repairs,
          lastBatchAt: now,
          handoffCheckedAt: Number.NEGATIVE_INFINITY
        }
      }).pipe(Effect.tapError(() => Scope.close(scope, Exit.void)))
    })
    type Session = Effect.Effect.Success<typeof open>
    // The open session, if any: read and set by the writer fiber (`isOpen` and `snapshot` only read it).
    let session: Session | undefined

    const ready = Effect.suspend(() =>
      session !== undefined ? Effect.succeed(session) : Effect.tap(open, (opened) => {
        session = opened
      })
    )

    // From here to a batch's answers, chains rather than generators: every record of every turn is appended
    // through them, and each step of a generator costs the writer fiber several runtime operations.

    /** Appends one chain's records; under `fsync: "always"` they are on the disk when it succeeds. */
    const writeChain = (
      s: Session,
      chain: string,
      records: ReadonlyArray<AuditRecord>,
      now: number,
      rotated: Array<string>
    ): Effect.Effect<void, AuditError> => {
      const head = s.heads.get(chain) ?? newHead(chain)
      s.heads.set(chain, head)
      return Effect.flatMap(files.write(head, records, s.key, now, rotated), () => {
        s.sinceCheckpoint += records.length
        return options.fsync === "always" ? files.sync(head.file!) : Effect.void
      })
    }

    const headsOf = (s: Session) =>
      [...s.heads.values()].filter((head) => head.seq > 0).map((head) => ({
        chain: head.chain,
        file: head.file ?? `${head.newestMonth}.jsonl`,
        seq: head.seq,
        hash: head.hash
      }))

    const checkpoint = (s: Session, reason: CheckpointReason, now: number) =>
      Effect.gen(function*() {
        yield* files.syncAll
        yield* s.checkpoints.write(headsOf(s), reason, iso(now), s.key)
        s.sinceCheckpoint = 0
      })

    // The sync or checkpoint running beside the writer, if any (see above).
    let beside: Fiber.RuntimeFiber<void> | undefined
    const besideRunning = () => beside !== undefined && beside.unsafePoll() === null
    const besideDone = Effect.suspend(() => {
      const running = beside
      beside = undefined
      return running === undefined ? Effect.void : Effect.asVoid(Fiber.await(running))
    })
    /** Starts `work` beside the writer, once the one before it is done. */
    const startBeside = (work: Effect.Effect<void>) =>
      Effect.zipRight(
        besideDone,
        Effect.map(Effect.forkDaemon(Effect.uninterruptible(work)), (fiber) => {
          beside = fiber
        })
      )

    const syncBeside = startBeside(
      Effect.catchAll(files.syncAll, (error) => Effect.logError(`audit: sync: ${error.message}`))
    )

    /**
     * A checkpoint of the heads as they are now, written beside the writer once the files are synced; none when
     * nothing is left to anchor (once the one before it is done). What it anchors counts again when it cannot be
     * written.
     */
    const checkpointBeside = (s: Session, reason: CheckpointReason, now: number) =>
      Effect.gen(function*() {
        yield* besideDone
        if (s.sinceCheckpoint === 0) return
        const line = yield* s.checkpoints.seal(headsOf(s), reason, iso(now), s.key)
        const anchored = s.sinceCheckpoint
        s.sinceCheckpoint = 0
        yield* startBeside(
          Effect.zipRight(files.syncAll, s.checkpoints.append(line)).pipe(
            Effect.catchAll((error) => {
              s.sinceCheckpoint += anchored
              return Effect.logError(`audit: the checkpoint could not be written: ${error.message}`)
            })
          )
        )
      })

    /** Ends the session: a checkpoint for what is not anchored yet, files closed, the lock released. */
    const close = (s: Session) =>
      Effect.gen(function*() {
        yield* besideDone
        if (s.sinceCheckpoint > 0) yield* checkpoint(s, "close", yield* Clock.currentTimeMillis)
        yield* files.closeAll
      }).pipe(
        Effect.catchAll((error) => Effect.logError(`audit: closing: ${error.message}`)),
        Effect.ensuring(Effect.zipRight(
          Scope.close(s.scope, Exit.void),
          Effect.sync(() => {
            session = undefined
          })
        ))
      )

    type Outcome = readonly [Append, Exit.Exit<void, AuditError>]
    type Item = { readonly record: AuditRecord; readonly job?: Append }

    /** The batch's records by chain, in the order each chain first comes: nearly always the monthly chain alone. */
    const byChain = (items: ReadonlyArray<Item>): ReadonlyArray<readonly [string, ReadonlyArray<Item>]> => {
      const groups = new Map<string, Array<Item>>()
      for (const item of items) {
        const chain = chainOfFile(auditFileOf(item.record)) ?? MONTHLY_CHAIN
        const group = groups.get(chain)
        if (group === undefined) groups.set(chain, [item])
        else group.push(item)
      }
      return [...groups]
    }

    /**
     * What follows a batch's writes: an approval, denial or override is anchored before it is answered; a
     * checkpoint that only the count of records asks for is written after the batch is answered (see `step`):
     * those records wait for an anchor anyway (up to CHECKPOINT_INTERVAL), and their callers need not wait for two
     * syncs. Then the timers are armed and the months left behind compressed.
     */
    const afterWrites = (
      s: Session,
      outcomes: Array<Outcome>,
      reasons: ReadonlySet<CheckpointReason>,
      now: number,
      rotated: ReadonlyArray<string>
    ): Effect.Effect<ReadonlyArray<Outcome>> => {
      const armed = () => {
        if (s.sinceCheckpoint > 0) options.arm("checkpoint")
        if (files.hasUnsynced()) options.arm("sync")
        options.arm("release")
      }
      if (reasons.size === 0 && rotated.length === 0) {
        armed()
        return Effect.succeed(outcomes)
      }
      return Effect.gen(function*() {
        if (reasons.size > 0) {
          yield* besideDone
          const exit = yield* Effect.exit(checkpoint(s, [...reasons][0]!, now))
          if (Exit.isFailure(exit)) {
            yield* Effect.logError("audit: the checkpoint could not be written", exit.cause)
            // An approval, denial or override that cannot be anchored is not acted upon.
            for (let i = 0; i < outcomes.length; i++) {
              if (triggerOf(outcomes[i]![0].record) !== undefined) outcomes[i] = [outcomes[i]![0], exit]
            }
          }
        }
        armed()
        for (const file of rotated) {
          yield* options.filesLock.withPermits(1)(compressMonth(auditDir, file)).pipe(
            Effect.catchAll((error) => Effect.logError(`audit rotation: ${error.message}`))
          )
        }
        return outcomes
      })
    }

    /** Each chain's records written in turn (one write each), every append given its chain's outcome. */
    const writeBatch = (s: Session, batch: ReadonlyArray<Append>, now: number) => {
      const recovered: Array<AuditRecord> = s.repairs.map((repair) => ({
        kind: "recovered",
        at: iso(now),
        file: repair.file,
        truncated_bytes: repair.bytes,
        detail: repair.detail
      }))
      const items: Array<Item> = []
      for (const record of recovered) items.push({ record })
      for (const job of batch) items.push({ record: job.record, job })
      const groups = byChain(items)
      const rotated: Array<string> = []
      const outcomes: Array<Outcome> = []
      const reasons = new Set<CheckpointReason>()
      const writeGroup = (index: number): Effect.Effect<ReadonlyArray<Outcome>> => {
        if (index === groups.length) return afterWrites(s, outcomes, reasons, now, rotated)
        const [chain, group] = groups[index]!
        return Effect.flatMap(
          Effect.exit(writeChain(s, chain, group.map((item) => item.record), now, rotated)),
          (exit) => {
            if (Exit.isSuccess(exit) && chain === MONTHLY_CHAIN && recovered.length > 0) s.repairs = []
            for (const item of group) {
              if (item.job === undefined) continue
              outcomes.push([item.job, exit])
              const reason = Exit.isSuccess(exit) ? triggerOf(item.record) : undefined
              if (reason !== undefined) reasons.add(reason)
            }
            return writeGroup(index + 1)
          }
        )
      }
      return writeGroup(0)
    }

    /** One batch of appends: the session opened if need be, the key moved to today's epoch, the records written. */
    const appendBatch = (batch: ReadonlyArray<Append>): Effect.Effect<ReadonlyArray<Outcome>, AuditError> =>
      Effect.flatMap(ready, (s) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          s.lastBatchAt = now
          return Effect.flatMap(keys.advance(s.key, epochOf(now)), (key) => {
            s.key = key
            return writeBatch(s, batch, now)
          })
        }))

    const tick = (what: Timer | "epoch") =>
      Effect.gen(function*() {
        const s = session
        const now = yield* Clock.currentTimeMillis
        if (s === undefined) {
          // Not writing now: still, yesterday's key must not stay on the machine.
          const key = what === "epoch" ? yield* keys.load : undefined
          if (key !== undefined) yield* keys.advance(key, epochOf(now))
          return
        }
        if (what === "sync" && files.hasUnsynced()) yield* syncBeside
        // A checkpoint beside the writer has its line sealed already: the old key is no longer needed.
        if (what === "epoch") s.key = yield* keys.advance(s.key, epochOf(now))
        if (what === "checkpoint") yield* checkpointBeside(s, "interval", now)
        if (what === "release") {
          // Idle, or asked for by another process: a writer between batches lets the folder go as well, so a
          // waiting process takes its turn within one tick even when this one has nothing left to append.
          if (now - s.lastBatchAt >= IDLE_MS) yield* close(s)
          else if (handoffRequested(auditDir)) {
            yield* close(s)
            yield* awaitTaker(auditDir)
          } else options.arm("release")
        }
      }).pipe(Effect.catchAll((error) => Effect.logError(`audit: ${what}: ${error.message}`)))

    /** Opens a writing session if there is none, as an append would, and lets it go when idle. */
    const probe = Effect.map(ready, () => options.arm("release"))

    const snapshot = Effect.sync(() => {
      const sizes = new Map<string, number>()
      const s = session
      if (s === undefined) return sizes
      for (const head of s.heads.values()) if (head.file !== undefined) sizes.set(head.file, head.size)
      sizes.set(options.checkpointFile, s.checkpoints.size())
      return sizes
    })

    /** Whether another process asked for the folder, looked for at most once per `WAIT_SPACING_MS`. */
    const handoffDue = (s: Session, now: number): boolean => {
      if (now - s.handoffCheckedAt < WAIT_SPACING_MS) return false
      s.handoffCheckedAt = now
      return handoffRequested(auditDir)
    }

    /**
     * After a batch is answered: a checkpoint once CHECKPOINT_EVERY records wait for one (not while a sync or
     * checkpoint runs beside: the next batch after it starts one), and the folder handed over when another process
     * is waiting to write. The request is looked for once per retry of the waiting process (a file system call:
     * not after every batch of a busy writer); the release tick looks too.
     */
    const afterBatch = Effect.suspend(() => {
      const s = session
      if (s === undefined) return Effect.void
      const counted = s.sinceCheckpoint >= CHECKPOINT_EVERY && !besideRunning()
      // The batch's own time: what the handoff check is spaced by.
      if (!counted && !handoffDue(s, s.lastBatchAt)) return Effect.void
      return Effect.gen(function*() {
        if (counted) {
          yield* checkpointBeside(s, "count", yield* Clock.currentTimeMillis).pipe(
            Effect.catchAll((error) => Effect.logError(`audit: the checkpoint could not be written: ${error.message}`))
          )
          if (!handoffDue(s, yield* Clock.currentTimeMillis)) return
        }
        yield* close(s)
        yield* awaitTaker(auditDir)
      })
    })

    /** The jobs other than appends, in order. */
    const others = Effect.fnUntraced(function*(jobs: ReadonlyArray<Job>) {
      for (const job of jobs) {
        if (job._tag === "Tick") yield* tick(job.what)
        // What verify reads is whole: a checkpoint under way is written first.
        if (job._tag === "Snapshot") job.done(yield* Effect.exit(Effect.zipRight(besideDone, snapshot)))
        if (job._tag === "Probe") job.done(yield* Effect.exit(probe))
      }
    })

    /** One step of the writer fiber: every queued job, appends first as one batch. */
    const step = (jobs: ReadonlyArray<Job>): Effect.Effect<void> => {
      const appends = jobs.filter((job): job is Append => job._tag === "Append")
      const written = appends.length === 0 ? Effect.void : Effect.flatMap(Effect.exit(appendBatch(appends)), (exit) => {
        if (Exit.isSuccess(exit)) {
          for (const [job, outcome] of exit.value) job.done(outcome)
        } else {
          for (const job of appends) job.done(exit)
        }
        return afterBatch
      })
      return appends.length === jobs.length ? written : Effect.zipRight(written, others(jobs))
    }

    const shutdown = Effect.suspend(() => session === undefined ? Effect.void : close(session))

    /** A writing session is open: an append would not have to take the lock or read the chains first. */
    const isOpen = (): boolean => session !== undefined

    return { step, shutdown, isOpen } as const
  })
