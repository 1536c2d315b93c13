import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { traceToJson } from "../../../src/domain/ExecutionTrace.js"
import type { LlmRequest } from "../../../src/domain/LlmTypes.js"
import type { ScriptEntry } from "../../../src/domain/ScriptEntry.js"
import { IdGeneratorSequential } from "../../../src/layers/ids/IdGeneratorSequential.js"
import { LlmFunction } from "../../../src/layers/llm/LlmScripted.js"
import { TestLayer } from "../../../src/layers/Test.js"
import { AgentRuntime } from "../../../src/services/AgentRuntime.js"
import { Workspace } from "../../../src/services/Workspace.js"
import { writeFile } from "../../contract/fixtures.js"

const script: ReadonlyArray<ScriptEntry> = [
  { toolCalls: [{ name: "fs_read", args: { path: "inbox/mail.txt" } }, { name: "fs_list", args: { path: "inbox" } }] },
  { toolCalls: [{ name: "fs_write", args: { path: "notes/summary.md", content: "a summary" } }] },
  { text: "Summarised." }
]

/** One scripted turn in a fresh graph: every request the model received, and the closed trace. */
const recordedRun = Effect.gen(function*() {
  const requests: Array<LlmRequest> = []
  const layer = TestLayer({
    ids: IdGeneratorSequential,
    approve: () => true,
    llm: LlmFunction((request) => {
      requests.push(request)
      return script[requests.length - 1] ?? { text: "out of script" }
    })
  })
  const trace = yield* Effect.gen(function*() {
    const workspace = yield* Workspace
    yield* Effect.promise(() => NodeFs.mkdir(NodePath.join(workspace.root, "inbox")))
    yield* writeFile(workspace, "inbox/mail.txt", "Dear owner, the meeting moved to Friday.")
    return yield* (yield* AgentRuntime).handle({ userMessage: "summarise my mail", sessionId: "s", channel: "cli:me" })
  }).pipe(Effect.provide(layer))
  return { requests, trace }
})

const withoutTimes = (json: string): string =>
  JSON.stringify(
    JSON.parse(json, (key, value) =>
      key === "started_at" || key === "finished_at" || key === "wall_time_ms" || key === "wall_ms" ? undefined : value)
  )

describe("a turn with the sequential IdGenerator", () => {
  it.scoped("two runs send byte-identical prompts and close byte-identical traces (timestamps aside)", () =>
    Effect.gen(function*() {
      const first = yield* recordedRun
      const second = yield* recordedRun
      assert.strictEqual(first.trace.outcome, "success")
      assert.strictEqual(first.requests.length, 3)
      assert.strictEqual(JSON.stringify(second.requests), JSON.stringify(first.requests))
      assert.strictEqual(withoutTimes(traceToJson(second.trace)), withoutTimes(traceToJson(first.trace)))
      assert.strictEqual(first.trace.trace_id, "00000000-0000-4000-8000-000000000001")
      const wrapped = JSON.stringify(first.requests[1]!.messages)
      assert.include(wrapped, "<untrusted id=\\\"0000000000000001\\\"")
    }))
})
