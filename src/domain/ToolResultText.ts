import type { ToolResult } from "./ToolCall.js"

/** Tool results are truncated by the runtime, never by the model. */
export const MAX_RESULT_BYTES = 2048

export const formatSize = (bytes: number): string =>
  bytes < 1024
    ? `${bytes} bytes`
    : bytes < 1024 * 1024
    ? `${Math.round(bytes / 1024)} KB`
    : `${(bytes / (1024 * 1024)).toFixed(1)} MB`

const isContinuation = (byte: number): boolean => (byte & 0xc0) === 0x80

/**
 * Keeps the head and the tail (errors and exit codes tend to be at the end) within `maxBytes` of UTF-8,
 * with a note giving the total size in between. Never cuts a character in two.
 */
export const truncateMiddle = (text: string, maxBytes: number = MAX_RESULT_BYTES): string => {
  if (text.length * 3 <= maxBytes) return text
  const bytes = Buffer.from(text, "utf8")
  if (bytes.length <= maxBytes) return text
  const note = `\n[... truncated, ${formatSize(bytes.length)} total]\n`
  const room = maxBytes - Buffer.byteLength(note)
  let headEnd = Math.ceil(room / 2)
  while (headEnd > 0 && isContinuation(bytes[headEnd]!)) headEnd--
  let tailStart = bytes.length - (room - headEnd)
  while (tailStart < bytes.length && isContinuation(bytes[tailStart]!)) tailStart++
  return bytes.subarray(0, headEnd).toString("utf8") + note + bytes.subarray(tailStart).toString("utf8")
}

/** Characters a reader may take for `<`: brackets and angle quotes that look like it. */
const lookAlikes = new Set(
  "\u2039\u2329\u3008\u27E8\u27EA\u276C\u276E\u2770\u02C2\u1438\u00AB\u226A\u300A\u29FC\u2AA1\u02F1\u1445\u16B2"
)

const opensTag = (c: string): boolean => c === "<" || lookAlikes.has(c) || c.normalize("NFKC").includes("<")

/**
 * Escapes every `<` and every character that is or normalises (NFKC) to one or looks like one, whatever
 * follows it: no spelling of the word (invisible or combining characters, other scripts, other slashes) can then
 * open or close a tag.
 */
export const neutralise = (content: string): string => {
  let out = ""
  for (const c of content) out += opensTag(c) ? "&lt;" : c
  return out
}

/**
 * Wraps external content so that the model treats it as data. The id is random per
 * wrapper and repeated in the closing tag; tags inside the content are neutralised, so it cannot close
 * the wrapper or open a fake one.
 */
export const wrapUntrusted = (content: string, source: string, retrievedAt: string, id: string): string =>
  `<untrusted id="${id}" source="${attribute(source)}" retrieved_at="${retrievedAt}">\n${
    neutralise(content)
  }\n</untrusted id="${id}">`

const attribute = (value: string): string => neutralise(value).replace(/["\n\r]/g, (c) => (c === "\"" ? "'" : " "))

/**
 * What the runtime tells the model about a result's status, ahead of its content (and outside any untrusted
 * wrapper): nothing for a success; that nothing was found, that the result is incomplete and why, or that the
 * call failed, and for a call that changes things, that it must not be retried blindly.
 */
export const statusHeader = (result: ToolResult, hasSideEffects: boolean): string | undefined => {
  switch (result.status) {
    case "success":
      return undefined
    case "empty":
      return "Empty result: the tool ran and found nothing."
    case "partial":
      return `Partial result: incomplete (${
        result.note ?? "see the note in the result"
      }); do not take it for the whole, and say so if you rely on it.`
    case "failed":
      return hasSideEffects
        ? "Tool failed. This tool changes things and may have taken effect in part: do not retry it blindly; " +
          "check what happened first, or tell the owner."
        : "Tool failed:"
  }
}

/** A result as the model reads it (without the untrusted wrapper): its status header, then its content. */
export const resultText = (result: ToolResult, hasSideEffects = false): string => {
  const header = statusHeader(result, hasSideEffects)
  return header === undefined ? result.content : `${header}\n${result.content}`
}
