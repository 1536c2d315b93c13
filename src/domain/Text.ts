/** At most `max` characters of `text`, an ellipsis marking a cut. */
export const truncateEnd = (text: string, max: number): string => text.length <= max ? text : `${text.slice(0, max)}…`

const hidden = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu

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
