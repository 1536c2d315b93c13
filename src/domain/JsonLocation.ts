/**
 * Where a JSON text stops being valid: the offset of the first character a JSON parser cannot accept (the
 * text's length when it ends too early) and what was expected there; undefined when the text is valid JSON.
 */
export const jsonSyntaxError = (text: string): { readonly offset: number; readonly expected: string } | undefined => {
  let i = 0
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++
  }
  const fail = (expected: string) => {
    throw { offset: i, expected }
  }
  const literal = (word: string) => {
    if (text.startsWith(word, i)) i += word.length
    else fail("a JSON value")
  }
  const string = () => {
    i++
    for (;;) {
      if (i >= text.length) fail("the end of the string (\")")
      const c = text[i]!
      if (c === "\"") return void i++
      if (c === "\\") {
        const next = text[i + 1]
        if (next === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 6
        else if (next !== undefined && "\"\\/bfnrt".includes(next)) i += 2
        else fail("a valid escape sequence")
      } else if (c < " ") fail("no control character inside a string")
      else i++
    }
  }
  const number = () => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400))
    if (match === null) fail("a JSON value")
    else i += match[0].length
  }
  const value = (): void => {
    ws()
    const c = text[i]
    if (c === undefined) fail("a JSON value")
    else if (c === "{") {
      i++
      ws()
      if (text[i] === "}") return void i++
      for (;;) {
        ws()
        if (text[i] !== "\"") fail("a property name in double quotes")
        string()
        ws()
        if (text[i] !== ":") fail("':' after the property name")
        i++
        value()
        ws()
        if (text[i] === ",") i++
        else if (text[i] === "}") return void i++
        else fail("',' or '}'")
      }
    } else if (c === "[") {
      i++
      ws()
      if (text[i] === "]") return void i++
      for (;;) {
        value()
        ws()
        if (text[i] === ",") i++
        else if (text[i] === "]") return void i++
        else fail("',' or ']'")
      }
    } else if (c === "\"") string()
    else if (c === "t") literal("true")
    else if (c === "f") literal("false")
    else if (c === "n") literal("null")
    else number()
  }
  try {
    value()
    ws()
    if (i < text.length) fail("the end of the text")
    return undefined
  } catch (error) {
    return error as { offset: number; expected: string }
  }
}

/** The 1-based line and column of an offset in a text. */
export const lineColumn = (text: string, offset: number): { readonly line: number; readonly column: number } => {
  let line = 1
  let start = 0
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text[i] === "\n") {
      line++
      start = i + 1
    }
  }
  return { line, column: offset - start + 1 }
}
