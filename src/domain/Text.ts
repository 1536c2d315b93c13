/**
 * The first `max` UTF-16 code units of `text`, one fewer when the cut would split a surrogate pair (an emoji): half
 * of one is not text, and a strict reader (a provider's JSON parser, Telegram) refuses the whole message for it.
 */
export const cutAt = (text: string, max: number): string => {
  if (text.length <= max) return text
  const last = text.charCodeAt(max - 1)
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max)
}

/** The encoding a byte order mark at the start of `bytes` declares, if there is one. */
export const byteOrderMark = (bytes: Uint8Array): "utf-8" | "utf-16le" | "utf-16be" | undefined =>
  bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf
    ? "utf-8"
    : bytes[0] === 0xff && bytes[1] === 0xfe
    ? "utf-16le"
    : bytes[0] === 0xfe && bytes[1] === 0xff
    ? "utf-16be"
    : undefined

/** `text` without a leading U+FEFF: a UTF-8 byte order mark some writers put first is not part of what they mean. */
export const withoutBom = (text: string): string => text.charCodeAt(0) === 0xfeff ? text.slice(1) : text

/** At most `max` characters of `text`, an ellipsis marking a cut (never inside a surrogate pair). */
export const truncateEnd = (text: string, max: number): string => text.length <= max ? text : `${cutAt(text, max)}…`

/**
 * `text` with any lone surrogate as U+FFFD. What a model is sent must be well-formed: the providers refuse a body
 * holding one ("no low surrogate in string"), and it may come from anywhere text is cut or decoded carelessly.
 */
export const wellFormed = (text: string): string => text.isWellFormed() ? text : text.toWellFormed()

/**
 * The lines that differ between two texts, as `-` (before) and `+` (after) lines around an `@@ line N` header:
 * the common first and last lines are left out. Cut at `max` characters.
 */
export const lineDiff = (before: string, after: string, max: number): string => {
  const a = before.split("\n")
  const b = after.split("\n")
  let start = 0
  while (start < a.length && start < b.length && a[start] === b[start]) start++
  let endA = a.length
  let endB = b.length
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--
    endB--
  }
  const lines = [
    `@@ line ${start + 1}`,
    ...a.slice(start, endA).map((line) => `-${line}`),
    ...b.slice(start, endB).map((line) => `+${line}`)
  ]
  return truncateEnd(lines.join("\n"), max)
}

const hidden = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu
const hasHidden = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u

/**
 * A name (a file's) as one token a reader can copy back: as it is when it is plain; otherwise, when it holds a
 * control, format or line-separator character (a line break, a bidirectional override), has a space at an end or
 * starts with a quote, as a JSON string, those characters written `\uXXXX`.
 */
export const quotedWhenHidden = (name: string): string =>
  !hasHidden.test(name) && name.trim() === name && !name.startsWith("\"")
    ? name
    : JSON.stringify(name).replace(
      hidden,
      (c) => c.split("").map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")
    )

/** C0 and C1 control characters but tab and newline: those a terminal acts on (ESC and CSI open its commands). */
const terminalControls = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g

/**
 * Text for a terminal: its control characters shown as `\uXXXX`, so that what a model, a page or a file wrote cannot
 * move the cursor, clear the screen, retitle the window or write the clipboard. Tabs and newlines stay.
 */
export const forTerminal = (text: string): string =>
  text.replace(terminalControls, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

/**
 * Text for a person to judge: control characters (C0, DEL, C1 such as CSI), bidirectional overrides and
 * isolates, zero-width and other format characters shown as `\uXXXX`, so what is shown is what is approved.
 */
export const visible = (text: string): string =>
  text.replace(hidden, (c) => {
    const code = c.codePointAt(0)!
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, "0")}`
  })

const escapedChar = (c: string): string => {
  const hex = c.charCodeAt(0).toString(16).padStart(4, "0")
  return `(?:${c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}|\\\\u${
    hex.replace(/[a-f]/g, (h) => `[${h}${h.toUpperCase()}]`)
  })`
}

/**
 * Hides a secret in text, written plainly or with any of its characters `\u`-escaped (as a JSON body may
 * echo it): apply it to raw text and again to what decoding produced.
 */
export const hideSecret = (secret: string, mask = "[redacted]") => {
  if (secret === "") return (text: string) => text
  const pattern = new RegExp([...secret].map(escapedChar).join(""), "g")
  return (text: string): string => text.replace(pattern, mask)
}
