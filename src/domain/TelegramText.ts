import { entitiesWithin, type Formatted } from "./TelegramMarkdown.js"
import { cutAt } from "./Text.js"

/** Telegram refuses a message longer than this (UTF-16 code units after entity parsing). */
export const TELEGRAM_TEXT_LIMIT = 4096

/**
 * `text` cut into messages of at most `limit` code units, in order, losing nothing: each cut at the last paragraph
 * break, else line break, else space in the second half of the window, else at the limit (never inside a
 * surrogate pair). Telegram refuses a message that is blank once trimmed, and trims the others: a part that is only
 * whitespace (a long run of blank lines) is left out, which loses nothing shown, and an empty text is one placeholder
 * message.
 */
export const splitMessage = (text: string, limit: number = TELEGRAM_TEXT_LIMIT): ReadonlyArray<string> => {
  if (text.trim() === "") return ["(empty answer)"]
  return partRanges(text, limit).map(([start, end]) => text.slice(start, end))
}

/** Where splitMessage cuts `text`: each part's [start, end), whitespace-only parts left out. */
const partRanges = (text: string, limit: number): ReadonlyArray<readonly [number, number]> => {
  const ranges: Array<readonly [number, number]> = []
  let from = 0
  while (text.length - from > limit) {
    const rest = text.slice(from)
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
    if (cut < 0) cut = cutAt(rest, limit).length
    if (rest.slice(0, cut).trim() !== "") ranges.push([from, from + cut])
    from += cut
  }
  if (text.slice(from).trim() !== "") ranges.push([from, text.length])
  return ranges
}

/**
 * Formatted text cut as splitMessage cuts it, each part with the entities that fall in it (an entity across a cut
 * is cut too). Telegram trims a message: a part starts at its first visible character, so that the offsets stay
 * true, and no entity reaches into its trailing whitespace.
 */
export const splitFormatted = (formatted: Formatted, limit: number = TELEGRAM_TEXT_LIMIT): ReadonlyArray<Formatted> => {
  if (formatted.text.trim() === "") return [{ text: "(empty answer)", entities: [] }]
  return partRanges(formatted.text, limit).map(([from, to]) => {
    const part = formatted.text.slice(from, to)
    const start = from + (part.length - part.trimStart().length)
    const visibleEnd = to - (part.length - part.trimEnd().length)
    return { text: formatted.text.slice(start, to), entities: entitiesWithin(formatted.entities, start, visibleEnd) }
  })
}

/**
 * A file name from a sender, made safe to keep: no folders; letters, marks and digits of any script (composed, NFC),
 * `_`, `.`, `-` and spaces kept, anything else (controls, bidirectional and format characters, symbols) as `_`; at
 * most its last 120 characters.
 */
export const sanitizeFileName = (name: string): string => {
  const base = (name.split(/[\\/]/).pop() ?? "").normalize("NFC")
  const cleaned = base.replace(/[^\p{L}\p{M}\p{N}_.\- ]+/gu, "_").replace(/^[.\s]+/, "").replace(/\s+/g, " ").trim()
  const bounded = [...cleaned].slice(-120).join("")
  return bounded === "" || /^\.*$/.test(bounded) ? "file" : bounded
}
