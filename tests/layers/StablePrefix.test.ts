import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeCrypto from "node:crypto"
import type { LlmRequest } from "../../src/domain/LlmTypes.js"
import { LlmFunction } from "../../src/layers/llm/LlmScripted.js"
import { TestLayer } from "../../src/layers/Test.js"
import { AgentRuntime } from "../../src/services/AgentRuntime.js"

/** Blocks 1-4 (constitution, identity, tools, long-term memory) and the tool catalog, as sent. */
const prefixHash = (request: LlmRequest): string =>
  NodeCrypto.createHash("sha256")
    .update(JSON.stringify({
      system: request.system.filter((block) => block.stable).map((block) => [block.name, block.text]),
      tools: request.tools
    }))
    .digest("hex")

describe("the stable prefix", () => {
  it.scoped("is byte-identical across 10 consecutive Thoughts of a session, across steps and turns", () => {
    const requests: Array<LlmRequest> = []
    const layer = LlmFunction((request) => {
      requests.push(request)
      return request.messages.at(-1)!.role === "user"
        ? { toolCalls: [{ name: "now", args: {} }], usage: { input: 100, output: 5 } }
        : { text: `answer ${requests.length}`, usage: { input: 100, output: 5 } }
    })
    return Effect.gen(function*() {
      const runtime = yield* AgentRuntime
      for (let n = 1; n <= 5; n++) {
        yield* runtime.handle({ userMessage: `what time is it? (${n})`, sessionId: "s", channel: "cli:alice" })
      }
      assert.strictEqual(requests.length, 10)
      const hashes = requests.map(prefixHash)
      assert.deepStrictEqual(new Set(hashes).size, 1, hashes.join("\n"))
      // What changes from Thought to Thought comes after the prefix.
      assert.isTrue(requests[0]!.system.every((block) => block.stable))
      assert.notDeepEqual(requests[0]!.messages, requests[9]!.messages)
    }).pipe(Effect.provide(TestLayer({ llm: layer })))
  })
})
