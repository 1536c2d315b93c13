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

/**
 * The readable text of an HTML page (its article when Readability finds one, else its body), with its title.
 * The HTML parser and Readability are loaded on the first page, so a process that fetches none never loads them.
 */
export const htmlToText = async (html: string): Promise<{ readonly title: string; readonly text: string }> => {
  const [{ Readability }, { parseHTML }] = await Promise.all([import("@mozilla/readability"), import("linkedom")])
  const { document } = parseHTML(withBody(html))
  const fallbackTitle = tidy(document.title ?? "")
  for (const node of document.querySelectorAll("script, style, noscript, template")) node.remove()
  const body = tidy(document.body?.textContent ?? "")
  const article = new Readability(document).parse()
  const text = tidy(article?.textContent ?? "")
  return {
    title: tidy(article?.title ?? "") || fallbackTitle,
    text: text === "" ? body : text
  }
}
