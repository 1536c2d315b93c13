import { assert, describe, it } from "@effect/vitest"
import { markdownToEntities } from "../../src/domain/TelegramMarkdown.js"
import { splitFormatted } from "../../src/domain/TelegramText.js"

/** Each entity as `type:the text it covers`, which is what the owner sees formatted. */
const shown = (markdown: string) => {
  const { entities, text } = markdownToEntities(markdown)
  return {
    text,
    marks: entities.map((e) => `${e.type}:${text.slice(e.offset, e.offset + e.length)}${e.url ? ` ${e.url}` : ""}`)
  }
}

describe("a model's Markdown as Telegram entities", () => {
  it("bold, italic, strikethrough, code and links lose their markers and keep their words", () => {
    assert.deepStrictEqual(shown("**Done**: wrote `notes.txt`, see [the docs](https://example.org/a_b) _now_"), {
      text: "Done: wrote notes.txt, see the docs now",
      marks: ["bold:Done", "code:notes.txt", "text_link:the docs https://example.org/a_b", "italic:now"]
    })
    assert.deepStrictEqual(shown("~~old~~ new, __very__ *much* so"), {
      text: "old new, very much so",
      marks: ["strikethrough:old", "bold:very", "italic:much"]
    })
    assert.deepStrictEqual(shown("**bold with *italic* inside**").marks, [
      "italic:italic",
      "bold:bold with italic inside"
    ])
    assert.deepStrictEqual(shown("*italic with **bold** inside*").marks, [
      "bold:bold",
      "italic:italic with bold inside"
    ])
    assert.deepStrictEqual(shown("**Run `npm test`** first"), {
      text: "Run npm test first",
      marks: ["code:npm test", "bold:Run npm test"]
    })
    assert.deepStrictEqual(
      shown("**not `closed** here`").marks,
      ["code:closed** here"],
      "a marker inside code closes nothing"
    )
  })

  it("a fenced block is pre, with its language, and nothing inside it is read as Markdown", () => {
    const { entities, text } = markdownToEntities("Run:\n```bash\nls *.md | grep **x**\n```\nthen wait.")
    assert.strictEqual(text, "Run:\nls *.md | grep **x**\nthen wait.")
    assert.deepStrictEqual(entities, [{ type: "pre", offset: 5, length: 20, language: "bash" }])
  })

  it("headings are bold lines; * and + bullets become •; - bullets stay", () => {
    assert.deepStrictEqual(shown("## Plan for **today**\n* one\n+ two\n- three"), {
      text: "Plan for today\n• one\n• two\n- three",
      marks: ["bold:today", "bold:Plan for today"]
    })
  })

  it("what is not Markdown stays as written: snake_case, arithmetic, lone markers, unclosed spans, escapes", () => {
    for (
      const plain of [
        "call load_user_data and snake_case_names",
        "2 * 3 * 4 = 24",
        "a ** b",
        "**unclosed bold",
        "`unclosed code",
        "[not a link](javascript:alert(1))",
        "price: 5 _ 6"
      ]
    ) {
      assert.deepStrictEqual(shown(plain), { text: plain, marks: [] }, plain)
    }
    assert.deepStrictEqual(shown("\\*not italic\\*"), { text: "*not italic*", marks: [] })
    assert.deepStrictEqual(shown("see https://example.org/_private_/a*b*c and *this*"), {
      text: "see https://example.org/_private_/a*b*c and this",
      marks: ["italic:this"]
    })
    // Only the markers read here are escapes: a regex or a path outside code keeps its backslashes.
    for (const plain of ["match \\d+\\.\\d+ here", "C:\\Users\\max\\notes.txt", "a \\(b\\) c", "\\\\server\\share"]) {
      assert.deepStrictEqual(shown(plain), { text: plain, marks: [] }, plain)
    }
  })

  it("offsets count UTF-16 code units, as Telegram does", () => {
    const { entities, text } = markdownToEntities("🙂 **ok** 東京")
    assert.strictEqual(text, "🙂 ok 東京")
    assert.deepStrictEqual(entities, [{ type: "bold", offset: 3, length: 2 }])
  })

  it("a split answer keeps each entity in its part, cut where the part is cut, offsets from the part's start", () => {
    const parts = splitFormatted(
      markdownToEntities(`**${"a".repeat(30)}** ${"b".repeat(30)} \`${"c".repeat(20)}\``),
      40
    )
    assert.deepStrictEqual(parts.map((part) => part.text), [`${"a".repeat(30)} `, `${"b".repeat(30)} `, "c".repeat(20)])
    assert.deepStrictEqual(parts.map((part) => part.entities), [
      [{ type: "bold", offset: 0, length: 30 }],
      [],
      [{ type: "code", offset: 0, length: 20 }]
    ])
    // No place to cut: the bold run is cut at the limit, and each part is bold.
    const long = splitFormatted(markdownToEntities(`**${"a".repeat(50)}**`), 40)
    assert.deepStrictEqual(long.map((part) => part.entities), [
      [{ type: "bold", offset: 0, length: 40 }],
      [{ type: "bold", offset: 0, length: 10 }]
    ])
  })
})
