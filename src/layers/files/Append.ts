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
