import { Readability } from "@mozilla/readability"
import { parseHTML } from "linkedom"

const tidy = (text: string): string =>
  text
    .split("\n")
    .map((line) => line.replace(/[ \t\u00A0]+/g, " ").trim())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim()

/** The readable text of an HTML page (its article when Readability finds one, else its body), with its title. */
export const htmlToText = (html: string): { readonly title: string; readonly text: string } => {
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
