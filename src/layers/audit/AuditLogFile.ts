import { Clock, Config, Deferred, Duration, Effect, Either, Layer, Option, ParseResult, Queue, Scope } from "effect"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { type AuditRecord, decodeAuditRecord, isExactAuditRecord } from "../../domain/AuditRecord.js"
import { AuditError, messageOf } from "../../domain/Errors.js"
import { OWNER_FOLDER } from "../../domain/OwnerOnly.js"
import { isInside } from "../../domain/Paths.js"
import { withSpanWhenTraced } from "../../programs/Spans.js"
import { AuditLog, type AuditQuery } from "../../services/AuditLog.js"
import { MyclawConfig } from "../../services/MyclawConfig.js"
import { Workspace } from "../../services/Workspace.js"
import { makeGroupCommit } from "../files/GroupCommit.js"
import type { AppendBytes } from "./ChainFiles.js"
import { makeAuditIndex } from "./Index.js"
import { DAY_MS, type EpochKey, keyring, makeKeyStore, parseKeyFile } from "./Keys.js"
import { fileError, listChains } from "./Lines.js"
import { unauditedTraces } from "./RecentTraces.js"
import { MONTHLY_CHAIN } from "./Seal.js"
import { verifyAuditDir } from "./Verify.js"
import { IDLE_MS, type Job, makeWriter, type Timer } from "./Writer.js"

export interface AuditLogFileOptions {
  /** `<workspace>/.audit`: the monthly files, approvals.jsonl, workspace.jsonl, constitution.jsonl. */
  readonly auditDir: string
  /** Outside the audit folder: the current key, the seed until the owner moves it, the checkpoints. */
  readonly keyDir: string
  readonly fsync: "always" | "batch"
  /** How a batch's bytes reach an audit file: a plain write unless a test simulates a failing disk. */
  readonly appendBytes?: AppendBytes | undefined
}

/** Under `fsync: "batch"`, how long a written record may wait for its sync. */
const SYNC_INTERVAL = Duration.millis(200)
/** The longest a record waits for a checkpoint to anchor it. */
const CHECKPOINT_INTERVAL = Duration.seconds(60)

/**
 * The audit log in JSONL files: append-only, hash-chained,
 * signed with forward-secure keys, anchored by checkpoints kept outside the folder, rotated monthly, queried
 * through a SQLite index rebuilt from the files whenever needed. Read-only use (verify, query) writes no
 * record: the writer starts (lock, keys, torn-tail repair) at the first append, and lets the folder go when
 * idle so that several myclaw processes can take turns writing it.
 */
export const makeAuditLogFile = (options: AuditLogFileOptions) =>
  Effect.gen(function*() {
    const auditDir = NodePath.resolve(options.auditDir)
    const keyDir = NodePath.resolve(options.keyDir)
    if (isInside(auditDir, keyDir)) {
      return yield* new AuditError({
        path: keyDir,
        reason: "Misconfigured",
        message: `the audit key directory must be outside ${auditDir}`
      })
    }
    yield* Effect.tryPromise({
      try: () => NodeFs.mkdir(auditDir, { recursive: true, mode: OWNER_FOLDER }),
      catch: (error) =>
        new AuditError({
          path: auditDir,
          reason: "Io",
          message: `cannot create the audit folder: ${messageOf(error)}`,
          cause: error
        })
    })
    const scope = yield* Effect.scope
    const keys = makeKeyStore(keyDir)
    const checkpointFile = NodePath.join(keyDir, "audit-checkpoints.jsonl")
    const filesLock = yield* Effect.makeSemaphore(1)
    const delays: Record<Timer, Duration.Duration> = {
      checkpoint: CHECKPOINT_INTERVAL,
      sync: SYNC_INTERVAL,
      release: Duration.millis(IDLE_MS)
    }
    const arms = {
      checkpoint: yield* Queue.sliding<void>(1),
      sync: yield* Queue.sliding<void>(1),
      release: yield* Queue.sliding<void>(1)
    }
    const writer = yield* makeWriter({
      auditDir,
      keys,
      checkpointFile,
      fsync: options.fsync,
      filesLock,
      // A timer already armed stays armed (its queue holds one item): a refused offer loses nothing.
      arm: (what) => {
        Queue.unsafeOffer(arms[what], undefined)
      },
      appendBytes: options.appendBytes
    })
    const commit = yield* makeGroupCommit<Job>({ step: writer.step, shutdown: writer.shutdown })
    // Each timer sleeps only once armed by a write, so an idle log schedules nothing.
    for (const what of ["checkpoint", "sync", "release"] as const) {
      yield* Effect.forkScoped(Effect.forever(
        Queue.take(arms[what]).pipe(
          Effect.zipRight(Effect.sleep(delays[what])),
          Effect.zipRight(commit.offer({ _tag: "Tick", what }))
        )
      ))
    }
    // A new key every UTC midnight, even with nothing to write: yesterday's key must not stay on the machine.
    yield* Effect.forkScoped(Effect.forever(
      Clock.currentTimeMillis.pipe(
        Effect.flatMap((now) => Effect.sleep(Duration.millis(DAY_MS - (now % DAY_MS)))),
        Effect.zipRight(commit.offer({ _tag: "Tick", what: "epoch" }))
      )
    ))

    const index = yield* Effect.cached(
      Scope.extend(makeAuditIndex({ auditDir, dbFile: NodePath.join(auditDir, "index.sqlite") }), scope)
    )

    // A chain, not a generator: every turn appends its record.
    const append = (record: AuditRecord) => withSpanWhenTraced("AuditLog.append")(appendRecord(record))
    const appendRecord = (record: AuditRecord): Effect.Effect<void, AuditError> => {
      // The caller waits until its record is written: the record itself is sealed, not a copy.
      const decoded = isExactAuditRecord(record) ? Either.right(record) : decodeAuditRecord(record)
      if (Either.isLeft(decoded)) {
        const given = (record as { readonly kind?: unknown }).kind
        const kind = typeof given === "string" ? given : "(no kind)"
        return Effect.fail(
          new AuditError({
            path: auditDir,
            reason: "InvalidRecord",
            message: `invalid ${kind} record: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`,
            cause: decoded.left
          })
        )
      }
      // Queued before the log closes, a record is written by the last drain; after, it is refused.
      return watched(commit.request<void, AuditError>(
        (done) => ({ _tag: "Append", record: decoded.right, done }),
        closed
      ))
    }

    // The last append's failure, until one succeeds: one variable that this log's writes alone change.
    let failure = Option.none<AuditError>()
    const watched = <A>(effect: Effect.Effect<A, AuditError>) =>
      Effect.matchEffect(effect, {
        onFailure: (error) => {
          failure = Option.some(error)
          return Effect.fail(error)
        },
        onSuccess: (value) => {
          failure = Option.none()
          return Effect.succeed(value)
        }
      })
    const closed = () => new AuditError({ path: auditDir, reason: "Closed", message: "the audit log is closed" })

    const probe = watched(commit.request<void, AuditError>((done) => ({ _tag: "Probe", done }), closed))
    // With a writing session open and no failure since the last success, an append could be made now: the
    // writer is asked only when one of the two does not hold.
    const ready = Effect.suspend(() => Option.isNone(failure) && writer.isOpen() ? Effect.void : probe)

    const query = Effect.fn("AuditLog.query")(function*(query: AuditQuery) {
      const { query: run } = yield* index
      return yield* filesLock.withPermits(1)(run(query))
    })

    // From the ends of the month files, without the index (which a start would otherwise open and bring up to
    // date for every record written since it was last read); the index answers only when an archive must be read.
    const unaudited = Effect.fn("AuditLog.unaudited")(function*(traceIds: ReadonlySet<string>, since: number) {
      const read = yield* filesLock.withPermits(1)(Effect.flatMap(listChains(auditDir), (chains) =>
        Effect.tryPromise({
          try: () => unauditedTraces(auditDir, chains.get(MONTHLY_CHAIN) ?? [], traceIds, since),
          catch: fileError(auditDir, "cannot read the audit log")
        })))
      if (read !== undefined) return read
      const records = yield* query({ kind: "trace", since, limit: Number.MAX_SAFE_INTEGER })
      const audited = new Set(records.flatMap((record) => record.kind === "trace" ? [record.trace_id] : []))
      return new Set([...traceIds].filter((id) => !audited.has(id)))
    })

    const snapshot = Effect.gen(function*() {
      const done = yield* Deferred.make<ReadonlyMap<string, number>>()
      if (!(yield* commit.offer({ _tag: "Snapshot", done: (exit) => Deferred.unsafeDone(done, exit) }))) {
        return new Map<string, number>()
      }
      return yield* Deferred.await(done)
    })

    const verifyIntegrity = Effect.fn("AuditLog.verifyIntegrity")(function*(
      verifyOptions?: { readonly seed?: Uint8Array | undefined }
    ) {
      const seed = verifyOptions?.seed
      let keyFor: (epoch: number) => Buffer | undefined
      if (seed !== undefined) {
        const parsed = parseKeyFile(seed)
        if (Either.isLeft(parsed)) {
          return yield* new AuditError({
            path: "<seed>",
            reason: "Misconfigured",
            message: `invalid verification seed: ${parsed.left}`
          })
        }
        keyFor = keyring(parsed.right)
      } else {
        const current: EpochKey | undefined = yield* keys.load
        keyFor = (epoch) => current !== undefined && epoch === current.epoch ? current.key : undefined
      }
      const limits = yield* snapshot
      return yield* filesLock.withPermits(1)(verifyAuditDir({
        auditDir,
        checkpointFile,
        keyFor,
        signatures: seed === undefined ? "current_epoch" : "all_epochs",
        limits
      }))
    })

    return AuditLog.of({
      ready,
      lastFailure: Effect.sync(() => failure),
      append,
      query,
      unaudited,
      verifyIntegrity
    })
  })

/** `MYCLAW_KEY_DIR`, by default `<workspace>/../.myclaw-keys/<workspace folder name>`: outside the workspace. */
export const auditKeyDir = (workspaceRoot: string) =>
  Config.string("MYCLAW_KEY_DIR").pipe(
    Config.withDefault(
      NodePath.join(NodePath.dirname(workspaceRoot), ".myclaw-keys", NodePath.basename(workspaceRoot))
    )
  )

/**
 * The audit log for read-only commands (verify, query): a workspace without `.audit/` is an error naming it,
 * never a new empty log that verifies clean.
 */
export const AuditLogExisting = Layer.scoped(
  AuditLog,
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const { config } = yield* MyclawConfig
    const auditDir = NodePath.join(workspace.root, ".audit")
    const exists = yield* Effect.promise(() => NodeFs.stat(auditDir).then((s) => s.isDirectory(), () => false))
    if (!exists) {
      return yield* new AuditError({ path: auditDir, reason: "Io", message: "no audit log here (check MYCLAW_HOME)" })
    }
    const keyDir = yield* auditKeyDir(workspace.root)
    return yield* makeAuditLogFile({ auditDir, keyDir: NodePath.resolve(keyDir), fsync: config.audit.fsync })
  })
)

/** The file audit log of the workspace (`<workspace>/.audit`), with `audit.fsync` from the configuration. */
export const AuditLogFile = Layer.scoped(
  AuditLog,
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const { config } = yield* MyclawConfig
    const keyDir = yield* auditKeyDir(workspace.root)
    return yield* makeAuditLogFile({
      auditDir: NodePath.join(workspace.root, ".audit"),
      keyDir: NodePath.resolve(keyDir),
      fsync: config.audit.fsync
    })
  })
)
