/** Telegram refuses a message longer than this (UTF-16 code units after entity parsing). */
export const TELEGRAM_TEXT_LIMIT = 4096

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff

/**
 * `text` cut into messages of at most `limit` code units, in order, losing nothing: each cut at the last paragraph
 * break, else line break, else space in the second half of the window, else at the limit (never inside a
 * surrogate pair). An empty text is one placeholder message (Telegram refuses empty ones).
 */
export const splitMessage = (text: string, limit: number = TELEGRAM_TEXT_LIMIT): ReadonlyArray<string> => {
  if (text.trim() === "") return ["(empty answer)"]
  const parts: Array<string> = []
  let rest = text
  while (rest.length > limit) {
    const window = rest.slice(0, limit)
    const floor = Math.floor(limit / 2)
    let cut = -1
    for (const separator of ["\n\n", "\n", " "]) {
      const at = window.lastIndexOf(separator)
      if (at >= floor) {
        cut = at + separator.length
        break
      }
    }
    if (cut < 0) cut = isHighSurrogate(rest.charCodeAt(limit - 1)) ? limit - 1 : limit
    parts.push(rest.slice(0, cut))
    rest = rest.slice(cut)
  }
  if (rest !== "") parts.push(rest)
  return parts
}

/** A file name from a sender, made safe to keep: no folders, no control or odd characters, bounded length. */
export const sanitizeFileName = (name: string): string => {
  const base = name.split(/[\\/]/).pop() ?? ""
  const cleaned = base.replace(/[^\w.\- ]+/g, "_").replace(/^[.\s]+/, "").replace(/\s+/g, " ").trim().slice(-120)
  return cleaned === "" || /^\.*$/.test(cleaned) ? "file" : cleaned
}
