import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { TestLayer } from "../../src/layers/Test.js"
import { AgentRuntime } from "../../src/services/AgentRuntime.js"
import { Workspace } from "../../src/services/Workspace.js"
import { recordingLlm, writeFile } from "../contract/fixtures.js"

describe("PromptBuilderLive", () => {
  it.scoped("blocks come in the documented order, stable first, from the workspace files", () => {
    const llm = recordingLlm([{ text: "ok" }])
    return Effect.gen(function*() {
      const workspace = yield* Workspace
      yield* writeFile(workspace, "USER.md", "The owner is Ada.")
      yield* writeFile(workspace, "MEMORY.md", "Ada likes tea.")
      const runtime = yield* AgentRuntime
      yield* runtime.handle({ userMessage: "hi", sessionId: "s", channel: "test" })
      const [request] = llm.requests
      assert.deepStrictEqual(request!.system.map((block) => [block.name, block.stable]), [
        ["constitution", true],
        ["identity", true],
        ["tools", true],
        ["memory", true]
      ])
      assert.include(request!.system[0]!.text, "# Constitution")
      assert.include(request!.system[2]!.text, "fs_write")
      assert.include(request!.system[2]!.text, "never instructions")
      assert.strictEqual(request!.system[3]!.text, "The owner is Ada.\n\nAda likes tea.")
      assert.deepStrictEqual(request!.messages, [{ role: "user", content: "hi" }])
      assert.deepStrictEqual(request!.tools.map((tool) => tool.name), [
        "fs_read",
        "fs_list",
        "fs_write",
        "now",
        "memory_note"
      ])
    }).pipe(Effect.provide(TestLayer({ llm: llm.layer })))
  })

  it.scoped("a workspace file that appears, changes or goes away between turns is read again", () => {
    const llm = recordingLlm([{ text: "1" }, { text: "2" }, { text: "3" }, { text: "4" }])
    return Effect.gen(function*() {
      const workspace = yield* Workspace
      const runtime = yield* AgentRuntime
      const memoryOf = (index: number) => llm.requests[index]!.system.find((block) => block.name === "memory")?.text
      yield* Effect.promise(() => NodeFs.rm(NodePath.join(workspace.root, "MEMORY.md"), { force: true }))
      yield* Effect.promise(() => NodeFs.rm(NodePath.join(workspace.root, "USER.md"), { force: true }))
      yield* runtime.handle({ userMessage: "hi", sessionId: "s", channel: "test" })
      yield* writeFile(workspace, "MEMORY.md", "Ada likes tea.")
      yield* runtime.handle({ userMessage: "hi", sessionId: "s", channel: "test" })
      yield* writeFile(workspace, "MEMORY.md", "Ada likes coffee now.")
      yield* runtime.handle({ userMessage: "hi", sessionId: "s", channel: "test" })
      yield* Effect.promise(() => NodeFs.rm(NodePath.join(workspace.root, "MEMORY.md")))
      yield* runtime.handle({ userMessage: "hi", sessionId: "s", channel: "test" })
      assert.deepStrictEqual([0, 1, 2, 3].map(memoryOf), [
        undefined,
        "Ada likes tea.",
        "Ada likes coffee now.",
        undefined
      ])
    }).pipe(Effect.provide(TestLayer({ llm: llm.layer })))
  })

  it.scoped("a change to one file is read again while the blocks of the unchanged files stay as they were", () => {
    const llm = recordingLlm([{ text: "1" }, { text: "2" }, { text: "3" }, { text: "4" }])
    return Effect.gen(function*() {
      const workspace = yield* Workspace
      const runtime = yield* AgentRuntime
      yield* writeFile(workspace, "IDENTITY.md", "I am Claw.")
      yield* writeFile(workspace, "USER.md", "The owner is Ada.")
      const turn = runtime.handle({ userMessage: "hi", sessionId: "s", channel: "test" })
      yield* turn
      yield* turn
      yield* writeFile(workspace, "IDENTITY.md", "I am Claw, second edition.")
      yield* turn
      yield* writeFile(workspace, "SOUL.md", "# Constitution\nBe brief.")
      yield* turn
      const blocks = llm.requests.map((request) => request.system.map((block) => `${block.name}: ${block.text}`))
      assert.deepStrictEqual(blocks[1], blocks[0])
      const identities = blocks.map((system) => system.find((block) => block.startsWith("identity: ")))
      assert.deepStrictEqual(identities, [
        "identity: I am Claw.",
        "identity: I am Claw.",
        "identity: I am Claw, second edition.",
        "identity: I am Claw, second edition."
      ])
      assert.strictEqual(blocks[3]![0], "constitution: # Constitution\nBe brief.")
      assert.deepStrictEqual(blocks[3]!.slice(1), blocks[2]!.slice(1))
      assert.include(blocks[3]!.at(-1)!, "memory: The owner is Ada.")
    }).pipe(Effect.provide(TestLayer({ llm: llm.layer })))
  })

  it.scoped("earlier turns of the same session come back verbatim, other sessions do not", () => {
    const llm = recordingLlm([{ text: "Noted: blue." }, { text: "Red noted." }, { text: "Blue." }])
    return Effect.gen(function*() {
      const runtime = yield* AgentRuntime
      yield* runtime.handle({ userMessage: "my colour is blue", sessionId: "a", channel: "test" })
      yield* runtime.handle({ userMessage: "my colour is red", sessionId: "b", channel: "test" })
      yield* runtime.handle({ userMessage: "which colour?", sessionId: "a", channel: "test" })
      assert.deepStrictEqual(llm.requests[2]!.messages, [
        { role: "user", content: "my colour is blue" },
        { role: "assistant", content: "Noted: blue.", toolCalls: [] },
        { role: "user", content: "which colour?" }
      ])
    }).pipe(Effect.provide(TestLayer({ llm: llm.layer, traceStore: "file" })))
  })
})
