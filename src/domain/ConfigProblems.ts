import type { ParseResult } from "effect"
import { truncateEnd } from "./Text.js"

/** Configuration errors in words: one line per problem, each naming its place in the file. */

/** `tiers.frontier[0].model` for the path `["tiers", "frontier", 0, "model"]`. */
export const jsonPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (text, key) =>
      typeof key === "number"
        ? `${text}[${key}]`
        : text === ""
        ? String(key)
        : /^[A-Za-z_$][\w$-]*$/.test(String(key))
        ? `${text}.${String(key)}`
        : `${text}[${JSON.stringify(String(key))}]`,
    ""
  )

const distance = (a: string, b: string): number => {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!
      row[j] = Math.min(
        row[j]! + 1,
        row[j - 1]! + 1,
        diagonal + (a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase() ? 0 : 1)
      )
      diagonal = above
    }
  }
  return row[b.length]!
}

/** The known name closest to `name`, when it is close enough to be a typo of it. */
export const didYouMean = (name: string, known: ReadonlyArray<string>): string | undefined => {
  const ranked = known.map((candidate) => [candidate, distance(name, candidate)] as const).sort((a, b) => a[1] - b[1])
  const best = ranked[0]
  return best !== undefined && best[1] <= Math.max(2, Math.floor(best[0].length / 3)) ? best[0] : undefined
}

const article = (expected: string) => /^(an? |the )/.test(expected) ? "" : /^[aeiou]/i.test(expected) ? "an " : "a "

/** One issue as a line: `maxSteps: expected a number, got "ten"`; `…modle: unknown field; did you mean "model"?` */
const describe = (issue: ParseResult.ArrayFormatterIssue): string => {
  const place = issue.path.length === 0 ? "(the whole file)" : jsonPath(issue.path)
  if (issue._tag === "Missing") return `${place}: is missing`
  if (issue._tag === "Unexpected") {
    const known = [...issue.message.matchAll(/"([^"]+)"/g)].map((match) => match[1]!)
    const name = String(issue.path.at(-1) ?? "")
    const guess = didYouMean(name, known)
    return `${place}: unknown field${guess === undefined ? "" : `; did you mean "${guess}"?`}`
  }
  const typed = /^Expected ([\s\S]+?), actual ([\s\S]*)$/.exec(issue.message)
  if (typed === null) return `${place}: ${issue.message}`
  const expected = typed[1]!
  const got = truncateEnd(typed[2]!, 60)
  return /[{}|<]|readonly/.test(expected)
    ? `${place}: not a valid value (got ${got})`
    : `${place}: expected ${article(expected)}${expected}, got ${got}`
}

/**
 * Whether an issue is only the "or leave it out" alternative of an optional field that was given a wrong value: the
 * value's own issue says what is wrong with it.
 */
export const isAbsentAlternative = (issue: ParseResult.ArrayFormatterIssue): boolean =>
  issue._tag === "Type" && issue.message.startsWith("Expected undefined, actual")

/**
 * The problems of a configuration that did not decode, one line each, in file order. The "or leave it out"
 * alternative of every field with a default is not a problem of its own, and is left out.
 */
export const configProblems = (issues: ReadonlyArray<ParseResult.ArrayFormatterIssue>): ReadonlyArray<string> => {
  const lines = issues
    .filter((issue) => !isAbsentAlternative(issue))
    .map(describe)
  return [...new Set(lines)]
}

/**
 * Where JSON text stops being valid: 1-based line and column of the first character a JSON parser rejects (the
 * end of the text when it ends too early), or undefined when the text is valid.
 */
export const jsonSyntaxPosition = (text: string): { readonly line: number; readonly column: number } | undefined => {
  let at = 0
  const fail = (): never => {
    throw at
  }
  const space = () => {
    while (at < text.length && " \t\n\r".includes(text[at]!)) at++
  }
  const literal = (word: string) => {
    for (const char of word) {
      if (text[at] !== char) fail()
      at++
    }
  }
  const string = () => {
    at++
    while (at < text.length && text[at] !== "\"") {
      if (text.charCodeAt(at) < 0x20) fail()
      if (text[at] === "\\") {
        at++
        if (text[at] === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(at + 1, at + 5))) fail()
          at += 4
        } else if (!"\"\\/bfnrt".includes(text[at] ?? "x")) fail()
      }
      at++
    }
    if (at >= text.length) fail()
    at++
  }
  const number = () => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(at))
    if (match === null || match[0] === "" || match[0] === "-") fail()
    at += match![0].length
  }
  const value = (): void => {
    space()
    const char = text[at]
    if (char === "{") {
      at++
      space()
      if (text[at] === "}") return void at++
      for (;;) {
        space()
        if (text[at] !== "\"") fail()
        string()
        space()
        if (text[at] !== ":") fail()
        at++
        value()
        space()
        if (text[at] === ",") at++
        else if (text[at] === "}") return void at++
        else fail()
      }
    }
    if (char === "[") {
      at++
      space()
      if (text[at] === "]") return void at++
      for (;;) {
        value()
        space()
        if (text[at] === ",") at++
        else if (text[at] === "]") return void at++
        else fail()
      }
    }
    if (char === "\"") return string()
    if (char === "t") return literal("true")
    if (char === "f") return literal("false")
    if (char === "n") return literal("null")
    return number()
  }
  try {
    value()
    space()
    if (at < text.length) fail()
    return undefined
  } catch (position) {
    const offset = Math.min(typeof position === "number" ? position : 0, text.length)
    const before = text.slice(0, offset)
    const line = before.split("\n").length
    return { line, column: offset - before.lastIndexOf("\n") }
  }
}
