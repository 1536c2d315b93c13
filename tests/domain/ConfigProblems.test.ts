import { assert, describe, it } from "@effect/vitest"
import { didYouMean, jsonPath, jsonSyntaxPosition } from "../../src/domain/ConfigProblems.js"

describe("configuration problems in words", () => {
  it("JSON paths as a person writes them", () => {
    assert.strictEqual(jsonPath(["tiers", "frontier", 0, "model"]), "tiers.frontier[0].model")
    assert.strictEqual(jsonPath(["pricing", "gpt-4o", "inputPerMTok"]), "pricing.gpt-4o.inputPerMTok")
    assert.strictEqual(jsonPath(["pricing", "a b"]), "pricing[\"a b\"]")
  })

  it("did you mean: a close name, never a far one", () => {
    assert.strictEqual(didYouMean("modle", ["provider", "model", "baseUrl"]), "model")
    assert.strictEqual(didYouMean("hardcapEur", ["softCapEur", "hardCapEur", "timeZone"]), "hardCapEur")
    assert.isUndefined(didYouMean("colour", ["provider", "model", "baseUrl"]))
  })

  it("where JSON text stops being valid, agreeing with JSON.parse on what is valid", () => {
    const cases: ReadonlyArray<readonly [string, { line: number; column: number } | undefined]> = [
      ["{\"a\": [1, 2.5e3, true, null, \"x\\u00e9\"]}", undefined],
      ["{ maxSteps: 3 }", { line: 1, column: 3 }],
      ["{\n  \"a\": 1,\n}", { line: 3, column: 1 }],
      ["{\"a\": tru}", { line: 1, column: 10 }],
      ["{\"a\": 1", { line: 1, column: 8 }],
      ["[1, 2] x", { line: 1, column: 8 }],
      ["{\"a\": 01}", { line: 1, column: 8 }]
    ]
    for (const [text, expected] of cases) {
      assert.deepStrictEqual(jsonSyntaxPosition(text), expected, text)
      let valid = true
      try {
        JSON.parse(text)
      } catch {
        valid = false
      }
      assert.strictEqual(valid, expected === undefined, text)
    }
  })
})
