import { Data, Effect } from "effect"
import * as NodeFs from "node:fs"
import { messageOf } from "../../domain/Errors.js"

/** An append that did not write all its bytes: the file may end with part of them. */
export class AppendError extends Data.TaggedError("AppendError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * Up to this many bytes are written in the calling thread: a copy into the page cache, microseconds, where a
 * write through Node's I/O threads first waits for one of them to wake up (hundreds of microseconds on a busy
 * machine) before the appends it carries can be answered. A larger batch (many writers at once) goes through the
 * I/O threads, which then write it while this thread goes on with other work.
 */
export const SYNC_APPEND_LIMIT = 64 * 1024

const failed = (error: unknown) => new AppendError({ message: messageOf(error), cause: error })

/** Appends every byte of `bytes` to `fd` (a file open to append): one write call unless one comes back short. */
export const appendAll = (fd: number, bytes: Uint8Array): Effect.Effect<void, AppendError> =>
  bytes.length <= SYNC_APPEND_LIMIT
    ? Effect.try({
      try: () => {
        let offset = 0
        while (offset < bytes.length) offset += NodeFs.writeSync(fd, bytes, offset, bytes.length - offset)
      },
      catch: failed
    })
    : Effect.async<void, AppendError>((resume) => {
      const from = (offset: number) =>
        NodeFs.write(fd, bytes, offset, bytes.length - offset, null, (error, written) => {
          if (error !== null) resume(Effect.fail(failed(error)))
          else if (offset + written < bytes.length) from(offset + written)
          else resume(Effect.void)
        })
      from(0)
    })

/** The largest buffer `makeBatchEncoder` keeps from one batch to the next. */
export const KEPT_BATCH_BYTES = 4 * 1024 * 1024

/**
 * Encodes a batch of lines as UTF-8, each followed by `terminator`, into one buffer kept for the next batch. A
 * hundred traces written together are a megabyte: joining them into a string and encoding that made two new
 * objects of that size for every batch, each allocated and faulted into memory afresh, which cost more than the
 * write itself. The bytes returned are a view of the kept buffer, valid until the next call: meant for one writer
 * that appends a batch before it encodes the next. A batch larger than `keep` bytes gets a buffer of its own.
 */
export const makeBatchEncoder = (keep: number = KEPT_BATCH_BYTES) => {
  // Memory of its own, not a slice of the pool Node shares between small buffers.
  let kept = Buffer.allocUnsafeSlow(0)
  return (lines: ReadonlyArray<string>, terminator: string): Buffer => {
    const terminatorBytes = Buffer.byteLength(terminator, "utf8")
    let total = lines.length * terminatorBytes
    for (const line of lines) total += Buffer.byteLength(line, "utf8")
    let target = kept
    if (total > kept.length) {
      target = Buffer.allocUnsafeSlow(total <= keep ? Math.min(keep, Math.max(total, 2 * kept.length)) : total)
      if (target.length <= keep) kept = target
    }
    let offset = 0
    for (const line of lines) {
      offset += target.write(line, offset, "utf8")
      offset += target.write(terminator, offset, "utf8")
    }
    return target.subarray(0, offset)
  }
}
