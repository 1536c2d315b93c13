import { formatSize } from "./ToolResultText.js"

/**
 * A byte sink that keeps at most `maxBytes`: the first half and the last half of everything written (errors
 * and exit messages tend to be at the end), and the total, so a cut can be told.
 */
export const headTail = (maxBytes: number) => {
  const headRoom = Math.ceil(maxBytes / 2)
  const tailRoom = maxBytes - headRoom
  const head: Array<Buffer> = []
  let headSize = 0
  let tail: Array<Buffer> = []
  let tailSize = 0
  let total = 0

  const write = (chunk: Buffer): void => {
    total += chunk.length
    const intoHead = Math.min(chunk.length, headRoom - headSize)
    if (intoHead > 0) {
      head.push(chunk.subarray(0, intoHead))
      headSize += intoHead
    }
    const rest = chunk.subarray(intoHead)
    if (rest.length === 0 || tailRoom === 0) return
    tail.push(rest)
    tailSize += rest.length
    if (tailSize > 2 * tailRoom) {
      tail = [Buffer.concat(tail).subarray(tailSize - tailRoom)]
      tailSize = tailRoom
    }
  }

  /** The text kept, with `[... N cut ...]` where the middle went, and how many bytes were cut. */
  const text = (): { readonly text: string; readonly cut: number; readonly total: number } => {
    const tailBytes = Buffer.concat(tail)
    const kept = tailBytes.subarray(Math.max(0, tailBytes.length - tailRoom))
    const cut = total - headSize - kept.length
    const headText = Buffer.concat(head).toString("utf8")
    const tailText = kept.toString("utf8")
    if (cut === 0) return { text: headText + tailText, cut, total }
    // A cut inside a multi-byte character shows as U+FFFD at the seam: drop those partial characters.
    const seam = `\n[... ${formatSize(cut)} of output cut ...]\n`
    return { text: headText.replace(/\uFFFD+$/, "") + seam + tailText.replace(/^\uFFFD+/, ""), cut, total }
  }

  return { write, text } as const
}
