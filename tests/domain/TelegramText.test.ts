import { assert, describe, it } from "@effect/vitest"
import { sanitizeFileName, splitMessage, TELEGRAM_TEXT_LIMIT } from "../../src/domain/TelegramText.js"
import { takeToken } from "../../src/domain/TokenBucket.js"

describe("splitMessage", () => {
  it("keeps a short text whole and gives an empty one a placeholder", () => {
    assert.deepStrictEqual(splitMessage("hi"), ["hi"])
    assert.deepStrictEqual(splitMessage("  \n"), ["(empty answer)"])
  })

  it("cuts at a paragraph, line or space in the second half of the window, losing nothing", () => {
    const text = `${"x".repeat(3000)}\n${"y".repeat(3000)} ${"z".repeat(3000)}`
    const parts = splitMessage(text)
    assert.isTrue(parts.every((part) => part.length <= TELEGRAM_TEXT_LIMIT))
    assert.strictEqual(parts.join(""), text)
    assert.strictEqual(parts[0], `${"x".repeat(3000)}\n`)
  })

  it("leaves out a part that is only whitespace: Telegram refuses it, and shows nothing of it", () => {
    const parts = splitMessage(`first${"\n".repeat(10_000)}second${" ".repeat(5000)}`)
    assert.isTrue(parts.every((part) => part.trim() !== "" && part.length <= TELEGRAM_TEXT_LIMIT))
    assert.deepStrictEqual(parts.map((part) => part.trim()), ["first", "second"])
  })

  it("never cuts a surrogate pair when it must cut inside a word", () => {
    const text = `${"a".repeat(4095)}😀${"b".repeat(10)}`
    const parts = splitMessage(text)
    assert.strictEqual(parts[0], "a".repeat(4095))
    assert.strictEqual(parts[1], `😀${"b".repeat(10)}`)
  })
})

describe("sanitizeFileName", () => {
  it("keeps the base name, replaces odd characters, refuses hidden and empty names", () => {
    assert.strictEqual(sanitizeFileName("../../etc/passwd"), "passwd")
    assert.strictEqual(sanitizeFileName("C:\\Users\\me\\report (final).pdf"), "report _final_.pdf")
    assert.strictEqual(sanitizeFileName(".bashrc"), "bashrc")
    assert.strictEqual(sanitizeFileName(".."), "file")
    assert.strictEqual(sanitizeFileName("a\u0000b\nc.txt"), "a_b_c.txt")
  })

  it("keeps the letters and digits of every script, composed; bidirectional and format characters still go", () => {
    assert.strictEqual(sanitizeFileName("Fattura città 2026.pdf"), "Fattura città 2026.pdf")
    assert.strictEqual(sanitizeFileName("Citta\u0300.txt"), "Città.txt", "a decomposed accent is composed (NFC)")
    assert.strictEqual(sanitizeFileName("отчёт №5.docx"), "отчёт _5.docx")
    assert.strictEqual(sanitizeFileName("报告.pdf"), "报告.pdf")
    assert.strictEqual(sanitizeFileName("invoice\u202efdp.exe"), "invoice_fdp.exe")
    assert.strictEqual(sanitizeFileName("a\u200bb.txt"), "a_b.txt")
    assert.strictEqual(sanitizeFileName("٣.txt"), "٣.txt")
  })
})

describe("takeToken", () => {
  it("lets a burst through, then spaces sends at the refill rate", () => {
    const rate = { capacity: 2, perSecond: 1 }
    const a = takeToken(undefined, rate, 0)
    const b = takeToken(a.bucket, rate, 0)
    const c = takeToken(b.bucket, rate, 0)
    const d = takeToken(c.bucket, rate, 0)
    assert.deepStrictEqual([a.waitMs, b.waitMs, c.waitMs, d.waitMs], [0, 0, 1000, 2000])
    assert.strictEqual(takeToken(d.bucket, rate, 5000).waitMs, 0)
  })
})
