const tidy = (text: string): string =>
  text
    .split("\n")
    .map((line) => line.replace(/[ \t\u00A0]+/g, " ").trim())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim()

const TITLE = /<title\b[^>]*>[\s\S]*?<\/title\s*>/i

/**
 * The page with its `<html>`, `<head>` and `<body>` written in when it leaves the body's out. HTML allows leaving them
 * out (minifiers do), and linkedom, unlike a browser's parser, does not make them: it would find no body, and the
 * page no text. The title goes in the head; the rest, whatever head elements it holds, in the body (none of those
 * has text once scripts and styles are removed).
 */
const withBody = (html: string): string => {
  if (/<body[\s>]/i.test(html)) return html
  const content = html.replace(/<!doctype[^>]*>/i, "").replace(/<\/?(?:html|head)(?=[\s>/])[^>]*>/gi, "")
  return `<!doctype html><html><head>${TITLE.exec(html)?.[0] ?? ""}</head><body>${
    content.replace(TITLE, "")
  }</body></html>`
}

/** Elements a browser lays out as blocks: a blank line before and after their text. */
const BLOCKS = new Set(
  ("ADDRESS ARTICLE ASIDE BLOCKQUOTE CAPTION DETAILS DIV DL FIELDSET FIGCAPTION FIGURE FOOTER FORM H1 H2 H3 H4 H5 H6 " +
    "HEADER HR MAIN NAV OL P PRE SECTION SUMMARY TABLE UL").split(" ")
)
/** Items of a list or a table: each on a line of its own, with no blank line between two. */
const LINES = new Set(["DD", "DT", "LI", "TR"])
const CELLS = new Set(["TD", "TH"])

/** What the walk reads of a node of linkedom's DOM. */
interface PageNode {
  readonly nodeType: number
  readonly nodeName: string
  readonly textContent: string | null
  readonly childNodes: Iterable<PageNode>
}

const TEXT_NODE = 3
const ELEMENT_NODE = 1

/**
 * The text of `root` laid out in lines as a browser shows it, where `textContent` would join the text of adjacent
 * elements as it is: a minified page has no whitespace between its tags, and its list items, paragraphs and table
 * cells would run together ("RomeOslo"). Blocks are set apart by a blank line, list items and table rows start a
 * line, `<br>` breaks one, cells are separated by a space, and whitespace collapses as it does on screen (kept in
 * `<pre>`).
 */
const readableText = (root: PageNode): string => {
  // Pieces joined once at the end: a string grown and read back at every break would be copied each time.
  const parts: Array<string> = []
  // Newlines at the end of the text so far (as if two at its start, where a break adds nothing), and whether a
  // space waits for the next word.
  let newlines = 2
  let space = false
  const word = (text: string) => {
    if (space && newlines === 0) parts.push(" ")
    parts.push(text)
    newlines = 0
    space = false
  }
  const lineBreak = (blank: boolean) => {
    for (const want = blank ? 2 : 1; newlines < want; newlines++) parts.push("\n")
    space = false
  }
  const visit = (node: PageNode, pre: boolean): void => {
    if (node.nodeType === TEXT_NODE) {
      const text = node.textContent ?? ""
      if (pre) {
        if (text === "") return
        word(text)
        const trailing = text.length - text.replace(/\n+$/, "").length
        newlines = trailing === text.length ? newlines + trailing : trailing
        return
      }
      const collapsed = text.replace(/\s+/g, " ")
      if (collapsed.startsWith(" ")) space = true
      const words = collapsed.trim()
      if (words !== "") word(words)
      if (collapsed.endsWith(" ")) space = true
      return
    }
    if (node.nodeType !== ELEMENT_NODE) return
    const name = node.nodeName.toUpperCase()
    if (name === "BR") {
      parts.push("\n")
      newlines++
      space = false
      return
    }
    const block = BLOCKS.has(name)
    const line = LINES.has(name)
    if (block || line) lineBreak(block)
    for (const child of node.childNodes) visit(child, pre || name === "PRE")
    if (CELLS.has(name)) space = true
    if (block || line) lineBreak(block)
  }
  visit(root, false)
  return parts.join("")
}

/**
 * The readable text of an HTML page (its article when Readability finds one, else its body), with its title.
 * The HTML parser and Readability are loaded on the first page, so a process that fetches none never loads them.
 */
export const htmlToText = async (html: string): Promise<{ readonly title: string; readonly text: string }> => {
  const [{ Readability }, { parseHTML }] = await Promise.all([import("@mozilla/readability"), import("linkedom")])
  const { document } = parseHTML(withBody(html))
  const fallbackTitle = tidy(document.title ?? "")
  for (const node of document.querySelectorAll("script, style, noscript, template")) node.remove()
  const body = document.body === null ? "" : tidy(readableText(document.body))
  const article = new Readability(document, { serializer: (node) => readableText(node as PageNode) }).parse()
  const text = tidy(article?.content ?? "")
  return {
    title: tidy(article?.title ?? "") || fallbackTitle,
    text: text === "" ? body : text
  }
}
