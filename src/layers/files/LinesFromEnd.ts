import * as NodeFs from "node:fs/promises"

const NEWLINE = 10

/**
 * How much of a file's end the first read takes; each read after it takes twice the one before, up to the most.
 * A reader after a line or two pays for one small read; one after hundreds of lines, for a few large ones rather
 * than a wait for an I/O thread every 64 KB.
 */
const FIRST_READ = 64 * 1024
const MOST_READ = 1024 * 1024

/**
 * The whole lines of a file from its end backwards, newest first: `visit` gets each line's bytes (without its
 * newline; a view of a buffer this reuses, to be copied by whoever keeps it) and the offset where it starts, until
 * it returns false or has had the file's first line. What this reads is what those lines weigh, whatever the
 * file's size. The bytes after the last newline are no line (one still being written, or the whole file when it
 * has no newline): they come back with the file's size, both as they were when it was opened.
 */
export const linesFromEnd = async (
  path: string,
  visit: (line: Buffer, start: number) => boolean
): Promise<{ readonly size: number; readonly partial: Buffer }> => {
  const handle = await NodeFs.open(path, "r")
  try {
    const { size } = await handle.stat()
    let position = size
    // The file's bytes from `position` to `stop`, the newline that ends the newest line not yet visited (-1 until
    // the file's last newline is found: the bytes are then all after it).
    let bytes = Buffer.alloc(0)
    let stop = -1
    let partial = bytes
    let going = true
    let next = FIRST_READ
    while (going && position > 0) {
      const length = Math.min(next, position)
      next = Math.min(2 * next, MOST_READ)
      // The new piece is read in front of the bytes not yet visited, into one buffer: only those are copied.
      const kept = stop === -1 ? bytes : bytes.subarray(0, stop - position)
      const joined = Buffer.allocUnsafe(length + kept.length)
      for (let read = 0; read < length;) {
        const { bytesRead } = await handle.read(joined, read, length - read, position - length + read)
        if (bytesRead === 0) throw new Error(`${path} became shorter while it was read`)
        read += bytesRead
      }
      kept.copy(joined, length)
      position -= length
      bytes = joined
      for (let at = bytes.length - 1; going && at >= 0;) {
        const newline = bytes.lastIndexOf(NEWLINE, at)
        if (newline === -1) break
        if (stop === -1) partial = Buffer.from(bytes.subarray(newline + 1))
        else going = visit(bytes.subarray(newline + 1, stop - position), position + newline + 1)
        stop = position + newline
        at = newline - 1
      }
    }
    if (stop === -1) return { size, partial: bytes }
    // The file's first line has no newline before it.
    if (going && position === 0) visit(bytes.subarray(0, stop), 0)
    return { size, partial }
  } finally {
    await handle.close()
  }
}
