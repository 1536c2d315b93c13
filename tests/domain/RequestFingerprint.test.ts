import { assert, describe, it } from "@effect/vitest"
import { canonicalJson } from "../../src/domain/ArgsHash.js"
import type { LlmRequest, SystemBlock } from "../../src/domain/LlmTypes.js"
import { fingerprintRequest, maskVolatile } from "../../src/domain/RequestFingerprint.js"
import { sha256HexPrefix } from "../../src/domain/Sha256.js"

const request = (system: ReadonlyArray<SystemBlock>): LlmRequest => ({
  tier: "frontier",
  system,
  messages: [{ role: "user", content: "hello" }],
  tools: []
})

/** The system prompt's hash as defined: its canonical JSON, volatile parts masked, SHA-256, 32 digits. */
const expected = (system: ReadonlyArray<SystemBlock>) => sha256HexPrefix(maskVolatile(canonicalJson(system)), 32)

const prompt = (soul: string, memory = ""): Array<SystemBlock> => [
  { name: "constitution", text: soul, stable: true },
  { name: "tools", text: "# Tools\n- fs_read: read a file", stable: true },
  { name: "memory", text: memory, stable: true }
]

describe("the fingerprint of a request's system prompt", () => {
  it("is the hash of the prompt's content, for each new prompt, equal to the last one or not", () => {
    const prompts = [
      prompt("Be careful."),
      prompt("Be careful."),
      prompt("Be carefuL."),
      prompt("Be careful.", "likes tea"),
      prompt("Be careful."),
      [...prompt("Be careful."), { name: "summary", text: "earlier: tea", stable: false }],
      prompt("Be careful.").map((block) => block.name === "tools" ? { ...block, stable: false } : block),
      prompt("Be careful.")
    ]
    for (const system of prompts) assert.strictEqual(fingerprintRequest(request(system)).system, expected(system))
    assert.notStrictEqual(expected(prompts[0]!), expected(prompts[2]!))
    assert.notStrictEqual(expected(prompts[0]!), expected(prompts[6]!))
  })

  it("follows a block changed in place after its prompt was hashed", () => {
    const first = prompt("Not hashed before.")
    const before = fingerprintRequest(request(first)).system
    const changed = first[0] as { text: string }
    changed.text = "Be bold."
    const again = [...first]
    assert.strictEqual(fingerprintRequest(request(again)).system, expected(again))
    assert.notStrictEqual(fingerprintRequest(request(again)).system, before)
  })

  it("compares a block's values, not its objects: an object value is never taken as equal", () => {
    const withObject = (tags: ReadonlyArray<string>) =>
      [{ name: "constitution", text: "Be careful.", stable: true, tags }] as unknown as Array<SystemBlock>
    const tags = ["a"]
    const first = withObject(tags)
    fingerprintRequest(request(first))
    tags[0] = "b"
    const second = withObject(tags)
    assert.strictEqual(fingerprintRequest(request(second)).system, expected(second))
  })
})
