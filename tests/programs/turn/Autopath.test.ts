import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestLayer } from "../../../src/layers/Test.js"
import { AgentRuntime } from "../../../src/services/AgentRuntime.js"
import { Workspace } from "../../../src/services/Workspace.js"
import { actions, probeTools, recordingLlm, writeFile } from "../../contract/fixtures.js"

const turn = (message: string) =>
  Effect.flatMap(AgentRuntime, (agent) => agent.handle({ userMessage: message, sessionId: "s", channel: "cli:me" }))

const readScript = [
  { toolCalls: [{ name: "fs_read", args: { path: "a.txt" } }] },
  { text: "It says: alpha" },
  { text: "the model was asked" }
]

describe("autopath", () => {
  it.scoped("a similar request reuses a plan served twice, its differing word as the argument", () => {
    const llm = recordingLlm(readScript)
    return Effect.gen(function*() {
      const workspace = yield* Workspace
      yield* writeFile(workspace, "a.txt", "alpha")
      yield* writeFile(workspace, "b.txt", "beta")
      assert.strictEqual((yield* turn("show me the file a.txt")).path, "react")
      assert.strictEqual((yield* turn("show me the file a.txt")).path, "fast")
      const similar = yield* turn("show me the file b.txt")
      assert.strictEqual(similar.path, "auto")
      assert.include(similar.path_reason ?? "", "generalised from \"show me the file a.txt\"")
      assert.deepStrictEqual(actions(similar).map((step) => step.args), [{ path: "b.txt" }])
      assert.strictEqual(similar.final_response, "It says: beta")
      assert.strictEqual(llm.requests.length, 2)
    }).pipe(Effect.provide(TestLayer({ llm: llm.layer, config: { plans: { autopath: true } } })))
  })

  it.scoped("autopath is off by default: the similar request goes to the model", () => {
    const llm = recordingLlm(readScript)
    return Effect.gen(function*() {
      const workspace = yield* Workspace
      yield* writeFile(workspace, "a.txt", "alpha")
      yield* turn("show me the file a.txt")
      yield* turn("show me the file a.txt")
      const similar = yield* turn("show me the file b.txt")
      assert.strictEqual(similar.path, "react")
      assert.strictEqual(similar.path_reason, "no cached plan for this request")
      assert.strictEqual(llm.requests.length, 3)
    }).pipe(Effect.provide(TestLayer({ llm: llm.layer })))
  })

  it.scoped("a plan whose arguments embed a personal value (a number from the message) is not generalised", () => {
    const llm = recordingLlm([
      { toolCalls: [{ name: "fs_write", args: { path: "count.txt", content: "42" } }] },
      { text: "Done." },
      { toolCalls: [{ name: "fs_write", args: { path: "total.txt", content: "42" } }] },
      { text: "Done too." }
    ])
    return Effect.gen(function*() {
      yield* turn("write 42 to count.txt")
      assert.strictEqual((yield* turn("write 42 to count.txt")).path, "fast")
      const similar = yield* turn("write 42 to total.txt")
      assert.strictEqual(similar.path, "react")
      assert.include(similar.path_reason ?? "", "embeds the number 42 from the request, which is not a parameter")
      assert.strictEqual(llm.requests.length, 4)
      assert.strictEqual(yield* probeTools.read(yield* Workspace, "total.txt"), "42")
    }).pipe(Effect.provide(TestLayer({ llm: llm.layer, approve: () => true, config: { plans: { autopath: true } } })))
  })
})
