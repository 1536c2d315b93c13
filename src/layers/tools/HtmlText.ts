const tidy = (text: string): string =>
  text
    .split("\n")
    .map((line) => line.replace(/[ \t\u00A0]+/g, " ").trim())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim()

/**
 * The readable text of an HTML page (its article when Readability finds one, else its body), with its title.
 * The HTML parser and Readability are loaded on the first page, so a process that fetches none never loads them.
 */
export const htmlToText = async (html: string): Promise<{ readonly title: string; readonly text: string }> => {
  const [{ Readability }, { parseHTML }] = await Promise.all([import("@mozilla/readability"), import("linkedom")])
  const { document } = parseHTML(html)
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
