/**
 * Policy globs: `**` matches anything, `*` anything but `/`, `?` one character but `/`. A pattern that is
 * exactly `*` matches every target.
 */
export const globToRegExp = (glob: string): RegExp => {
  if (glob === "*") return /^[\s\S]*$/
  let source = ""
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!
    if (c === "*") {
      if (glob[i + 1] === "*") {
        source += "[\\s\\S]*"
        i++
      } else {
        source += "[^/]*"
      }
    } else if (c === "?") {
      source += "[^/]"
    } else {
      source += c.replace(/[.+^${}()|[\]\\]/g, "\\$&")
    }
  }
  return new RegExp(`^${source}$`)
}
