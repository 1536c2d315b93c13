/**
 * A model's Markdown as Telegram text with entities: the markers go, and what they mark is sent as offsets
 * (UTF-16 code units), never as a parse mode, so no character of the answer can make Telegram refuse the message.
 * What is not understood stays as it was written.
 */

/** The entities this makes (Telegram's MessageEntity). */
export interface TgEntity {
  readonly type: "bold" | "italic" | "strikethrough" | "code" | "pre" | "text_link"
  readonly offset: number
  readonly length: number
  readonly url?: string
  readonly language?: string
}

export interface Formatted {
  readonly text: string
  readonly entities: ReadonlyArray<TgEntity>
}

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})\s*([\w#+.-]*)\s*$/
const HEADING = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/
const BULLET = /^(\s*)[*+]\s+/
const BARE_URL = /^https?:\/\/[^\s<>"`]+/i
const LINK = /^\[([^\]\n]+)\]\(((?:https?:\/\/|mailto:)[^\s()]+)\)/
/** Escapes of the markers read here only: `\.`, `\d` or `\\server` outside code (a regex, a path) stay as written. */
const ESCAPABLE = new Set(["`", "*", "_", "~", "[", "]"])
const wordChar = (char: string | undefined) => char !== undefined && /[\p{L}\p{N}]/u.test(char)
const space = (char: string | undefined) => char === undefined || /\s/.test(char)

class Builder {
  text = ""
  readonly entities: Array<TgEntity> = []

  mark(type: TgEntity["type"], start: number, extra: Partial<Pick<TgEntity, "url" | "language">> = {}) {
    const length = this.text.length - start
    if (length > 0) this.entities.push({ type, offset: start, length, ...extra })
  }

  /** One line's inline Markdown: code, bold, italic, strikethrough, links, escapes. */
  inline(line: string) {
    let i = 0
    while (i < line.length) {
      const char = line[i]!
      const rest = line.slice(i)
      if (char === "\\" && ESCAPABLE.has(line[i + 1] ?? "")) {
        this.text += line[i + 1]
        i += 2
        continue
      }
      if (char === "`") {
        const ticks = /^`+/.exec(rest)![0]
        const close = line.indexOf(ticks, i + ticks.length)
        if (close > i + ticks.length) {
          const start = this.text.length
          this.text += line.slice(i + ticks.length, close)
          this.mark("code", start)
          i = close + ticks.length
          continue
        }
        this.text += ticks
        i += ticks.length
        continue
      }
      const pair = rest.startsWith("**") || rest.startsWith("__") || rest.startsWith("~~") ? rest.slice(0, 2) : ""
      if (pair !== "" && !space(line[i + 2]) && (pair !== "__" || !wordChar(line[i - 1]))) {
        const close = this.closing(line, i + 2, pair)
        if (close > 0) {
          const start = this.text.length
          this.inline(line.slice(i + 2, close))
          this.mark(pair === "~~" ? "strikethrough" : "bold", start)
          i = close + 2
          continue
        }
      }
      if ((char === "*" || char === "_") && !space(line[i + 1]) && (char === "*" || !wordChar(line[i - 1]))) {
        const close = this.closing(line, i + 1, char)
        if (close > 0) {
          const start = this.text.length
          this.inline(line.slice(i + 1, close))
          this.mark("italic", start)
          i = close + 1
          continue
        }
      }
      // A bare address is copied as it is: its _ and * are part of it (Telegram links it by itself).
      if ((char === "h" || char === "H") && !wordChar(line[i - 1])) {
        const address = BARE_URL.exec(rest)
        if (address !== null) {
          this.text += address[0]
          i += address[0].length
          continue
        }
      }
      if (char === "[") {
        const link = LINK.exec(rest)
        if (link !== null) {
          const start = this.text.length
          this.text += link[1]
          this.mark("text_link", start, { url: link[2]! })
          i += link[0].length
          continue
        }
      }
      this.text += char
      i++
    }
  }

  /**
   * Where `marker` closes a span opened before `from`: preceded by a non-space, and for `_`/`__` not inside a
   * word; code spans, escapes and (for a single marker) doubled markers are stepped over. -1 when it does not.
   */
  private closing(line: string, from: number, marker: string): number {
    let at = from
    while (at < line.length) {
      if (line[at] === "\\") {
        at += 2
        continue
      }
      if (line[at] === "`") {
        const ticks = /^`+/.exec(line.slice(at))![0]
        const close = line.indexOf(ticks, at + ticks.length)
        at = close < 0 ? at + ticks.length : close + ticks.length
        continue
      }
      if (marker.length === 1 && line.startsWith(marker + marker, at)) {
        at += 2
        continue
      }
      if (
        line.startsWith(marker, at) && at > from && !space(line[at - 1]) &&
        !(marker.startsWith("_") && wordChar(line[at + marker.length]))
      ) {
        return at
      }
      at++
    }
    return -1
  }
}

/** Markdown to Telegram text and entities. */
export const markdownToEntities = (markdown: string): Formatted => {
  const out = new Builder()
  const lines = markdown.split("\n")
  for (let n = 0; n < lines.length; n++) {
    if (n > 0) out.text += "\n"
    const line = lines[n]!
    const fence = FENCE_OPEN.exec(line)
    if (fence !== null) {
      const marker = fence[1]!
      const end = lines.findIndex((candidate, k) =>
        k > n && candidate.trim().startsWith(marker[0]!.repeat(marker.length)) &&
        /^\s*(`+|~+)\s*$/.test(candidate)
      )
      if (end > n) {
        const start = out.text.length
        out.text += lines.slice(n + 1, end).join("\n")
        out.mark("pre", start, fence[2] === "" ? {} : { language: fence[2]! })
        n = end
        continue
      }
    }
    const heading = HEADING.exec(line)
    if (heading !== null) {
      const start = out.text.length
      out.inline(heading[1]!)
      out.mark("bold", start)
      continue
    }
    const bullet = BULLET.exec(line)
    if (bullet !== null) {
      out.text += `${bullet[1]}• `
      out.inline(line.slice(bullet[0].length))
      continue
    }
    out.inline(line)
  }
  return { text: out.text, entities: out.entities }
}

/**
 * The entities of `entities` that fall in [start, end), cut to it and counted from `start`: what a part of a
 * split message keeps.
 */
export const entitiesWithin = (
  entities: ReadonlyArray<TgEntity>,
  start: number,
  end: number
): ReadonlyArray<TgEntity> =>
  entities.flatMap((entity) => {
    const from = Math.max(entity.offset, start)
    const to = Math.min(entity.offset + entity.length, end)
    return to > from ? [{ ...entity, offset: from - start, length: to - from }] : []
  })
