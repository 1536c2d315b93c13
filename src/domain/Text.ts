/** At most `max` characters of `text`, an ellipsis marking a cut. */
export const truncateEnd = (text: string, max: number): string => text.length <= max ? text : `${text.slice(0, max)}…`

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
