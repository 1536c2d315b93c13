import { assert, describe, it } from "@effect/vitest"
import { restartDelay } from "../../../src/layers/mcp/McpServersLive.js"

describe("the restart delay of an MCP server", () => {
  it("doubles with each consecutive failure from the base delay, up to the maximum", () => {
    const restart = { baseDelayMs: 1_000, maxDelayMs: 8_000 }
    assert.deepStrictEqual([1, 2, 3, 4, 5, 60].map((failures) => restartDelay(restart, failures)), [
      1_000,
      2_000,
      4_000,
      8_000,
      8_000,
      8_000
    ])
  })
})
