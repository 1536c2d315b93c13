import { FileSystem } from "@effect/platform"
import { Effect, Exit, Scope } from "effect"
import type { AuditRecord } from "../../domain/AuditRecord.js"
import { AuditError, messageOf } from "../../domain/Errors.js"
import { appendAll, type AppendError, makeBatchEncoder } from "../files/Append.js"
import type { Head } from "./Heads.js"
import type { EpochKey } from "./Keys.js"
import { joinPath } from "./Lines.js"
import { monthlyFile, monthOfMillis } from "./Rotation.js"
import { MONTHLY_CHAIN, monthOfFile, sealLine, sha256 } from "./Seal.js"

/**
 * How a batch's bytes reach an audit file open to append (`fd`): all of them, or an error. Tests give one that
 * fails halfway, as a full disk does.
 */
export type AppendBytes = (fd: number, bytes: Uint8Array) => Effect.Effect<void, AppendError>

/**
 * The files the writer appends to, kept open (`O_APPEND`, through the platform FileSystem). Each chain's records
 * of a batch are sealed in order and written with one write of whole lines (`appendBytes`); a write that fails
 * is cut back to the last whole line, so the file never keeps half a record while myclaw runs.
 *
 * `syncAll` may run beside the writer's appends (a sync of the disk takes milliseconds, appends microseconds): a
 * file written while its sync runs stays marked unsynced, and a file is never closed under a sync that holds it.
 */
export const makeChainFiles = (auditDir: string, appendBytes: AppendBytes = appendAll) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const handles = new Map<string, { readonly file: FileSystem.File; readonly scope: Scope.CloseableScope }>()
    // The files written since their last sync, each with the number of its last write: a sync that began before a
    // write does not cover it, and leaves it marked.
    const dirty = new Map<string, number>()
    let writes = 0
    // Held by `syncAll` and by a file's close: a handle is not closed under a sync running beside the writer.
    const handlesLock = yield* Effect.makeSemaphore(1)
    /** Files whose failed write could not be cut back: appends to them fail until myclaw restarts. */
    const broken = new Map<string, string>()
    // One writer appends a batch before it seals the next: the batch's bytes reuse one buffer.
    const encode = makeBatchEncoder()

    const fail = (path: string, what: string) => (error: { readonly message: string }) =>
      new AuditError({ path, reason: "Io", message: `${what}: ${error.message}`, cause: error })

    const handleOf = Effect.fnUntraced(function*(name: string) {
      const open = handles.get(name)
      if (open !== undefined) return open.file
      const scope = yield* Scope.make()
      const path = joinPath(auditDir, name)
      const file = yield* Scope.extend(fs.open(path, { flag: "a", mode: 0o600 }), scope).pipe(
        Effect.mapError(fail(path, "cannot open the audit file")),
        Effect.tapError(() => Scope.close(scope, Exit.void))
      )
      handles.set(name, { file, scope })
      return file
    })

    const sync = Effect.fnUntraced(function*(name: string) {
      const open = handles.get(name)
      const written = dirty.get(name)
      if (open === undefined || written === undefined) return
      yield* open.file.sync.pipe(Effect.mapError(fail(joinPath(auditDir, name), "cannot sync the audit file")))
      if (dirty.get(name) === written) dirty.delete(name)
    })

    const syncAll = handlesLock.withPermits(1)(
      Effect.suspend(() => Effect.forEach([...dirty.keys()], sync, { discard: true }))
    )

    const close = (name: string) =>
      handlesLock.withPermits(1)(Effect.gen(function*() {
        yield* sync(name)
        const open = handles.get(name)
        handles.delete(name)
        if (open !== undefined) yield* Scope.close(open.scope, Exit.void)
      }))

    const closeAll = Effect.suspend(() => Effect.forEach([...handles.keys()], close, { discard: true }))

    /** The month a batch of the monthly chain goes to: the clock's (or a record's later) month, never back. */
    const monthTarget = (head: Head, records: ReadonlyArray<AuditRecord>, now: number) => {
      let month = monthOfMillis(now)
      for (const record of records) month = record.at.slice(0, 7) > month ? record.at.slice(0, 7) : month
      const newest = head.newestMonth
      if (newest !== undefined && newest > month) month = newest
      if (newest === month && head.file === undefined) {
        // The newest month is already compressed (the clock went back): start the month after it.
        month = new Date(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5, 7)), 1)).toISOString().slice(0, 7)
      }
      return monthlyFile(month)
    }

    /**
     * Moves `head` to the file `target` (the monthly chain to a new month); the file before it is closed and
     * pushed to `rotated`.
     */
    const moveTo = (head: Head, target: string, path: string, rotated: Array<string>) =>
      Effect.gen(function*() {
        if (head.file !== undefined) {
          yield* close(head.file)
          rotated.push(head.file)
        }
        head.file = target
        head.newestMonth = monthOfFile(target)
        head.size = yield* fs.stat(path).pipe(Effect.map((info) => Number(info.size)), Effect.orElseSucceed(() => 0))
      })

    /**
     * Seals `records` after the head of their chain, appends them with one write to `target`, and moves the head
     * past them. A chain, not a generator: every record of every turn is written through it. A failed write is
     * cut back to the last whole line; a file whose cut fails is refused until myclaw restarts.
     */
    const append = (
      head: Head,
      target: string,
      path: string,
      records: ReadonlyArray<AuditRecord>,
      key: EpochKey
    ): Effect.Effect<void, AuditError> => {
      let { hash, seq } = head
      const lines: Array<string> = []
      for (const record of records) {
        let line: string
        try {
          line = sealLine(record, { seq: seq + 1, prev: hash, epoch: key.epoch }, key.key)
        } catch (error) {
          return Effect.fail(
            new AuditError({
              path,
              reason: "InvalidRecord",
              message: `cannot seal the record: ${messageOf(error)}`,
              cause: error
            })
          )
        }
        lines.push(line)
        seq += 1
        hash = sha256(line)
      }
      const bytes = encode(lines, "\n")
      const written = (file: FileSystem.File) =>
        Effect.matchEffect(appendBytes(file.fd, bytes), {
          onFailure: (error) =>
            file.truncate(FileSystem.Size(head.size)).pipe(
              Effect.catchAll((cut) =>
                Effect.sync(() =>
                  broken.set(target, `a failed write could not be cut back (${cut.message}): restart myclaw`)
                )
              ),
              Effect.zipRight(Effect.fail(fail(path, "cannot append to the audit file")(error)))
            ),
          onSuccess: () => {
            head.seq = seq
            head.hash = hash
            head.size += bytes.length
            dirty.set(target, ++writes)
            return Effect.void
          }
        })
      const open = handles.get(target)
      return open !== undefined ? written(open.file) : Effect.flatMap(handleOf(target), written)
    }

    /**
     * Appends `records` to the chain of `head`, moving the monthly chain to a new month's file first when the
     * month changed (the previous file's name is pushed to `rotated`, for compression).
     */
    const write = (
      head: Head,
      records: ReadonlyArray<AuditRecord>,
      key: EpochKey,
      now: number,
      rotated: Array<string>
    ): Effect.Effect<void, AuditError> =>
      Effect.suspend(() => {
        const target = head.chain === MONTHLY_CHAIN ? monthTarget(head, records, now) : head.chain
        const path = joinPath(auditDir, target)
        const problem = broken.get(target)
        if (problem !== undefined) return Effect.fail(new AuditError({ path, reason: "Io", message: problem }))
        if (head.file === target) return append(head, target, path, records, key)
        return Effect.zipRight(
          moveTo(head, target, path, rotated),
          Effect.suspend(() => append(head, target, path, records, key))
        )
      })

    return { write, sync, syncAll, closeAll, hasUnsynced: () => dirty.size > 0 } as const
  })
