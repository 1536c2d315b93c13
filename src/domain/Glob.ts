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

type Token = "**" | "*" | "?" | { readonly literal: string }

const tokens = (glob: string): ReadonlyArray<Token> => {
  if (glob === "*") return ["**"]
  const out: Array<Token> = []
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!
    if (c === "*" && glob[i + 1] === "*") {
      out.push("**")
      i++
    } else if (c === "*" || c === "?") {
      out.push(c)
    } else {
      out.push({ literal: c })
    }
  }
  return out
}

/**
 * Whether every target `narrower` matches is matched by `broader` as well (policy glob syntax). Sound: it may
 * answer false for an exotic pair that is covered, never true for one that is not.
 */
export const globCovers = (broader: string, narrower: string): boolean => {
  const a = tokens(broader)
  const b = tokens(narrower)
  const memo = new Map<number, boolean>()
  const covers = (i: number, j: number): boolean => {
    const key = i * (b.length + 1) + j
    const known = memo.get(key)
    if (known !== undefined) return known
    let result: boolean
    const x = a[i]
    const y = b[j]
    if (x === undefined) {
      result = y === undefined
    } else if (x === "**") {
      result = covers(i + 1, j) || (y !== undefined && covers(i, j + 1))
    } else if (x === "*") {
      const within = y !== undefined && y !== "**" && (typeof y === "string" || y.literal !== "/")
      result = covers(i + 1, j) || (within && covers(i, j + 1))
    } else if (x === "?") {
      result = y !== undefined && (y === "?" || (typeof y !== "string" && y.literal !== "/")) && covers(i + 1, j + 1)
    } else {
      result = y !== undefined && typeof y !== "string" && y.literal === x.literal && covers(i + 1, j + 1)
    }
    memo.set(key, result)
    return result
  }
  return covers(0, 0)
}
