import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { decodeTrace, encodeTrace, TRACE_FORMAT } from "../../../src/domain/ExecutionTrace.js"
import type { LlmRequest } from "../../../src/domain/LlmTypes.js"
import { fingerprintRequest } from "../../../src/domain/RequestFingerprint.js"
import type { ScriptEntry } from "../../../src/domain/ScriptEntry.js"
import { LlmFunction } from "../../../src/layers/llm/LlmScripted.js"
import { TestLayer } from "../../../src/layers/Test.js"
import { AgentRuntime } from "../../../src/services/AgentRuntime.js"
import { Workspace } from "../../../src/services/Workspace.js"
import { writeFile } from "../../contract/fixtures.js"

const script: ReadonlyArray<ScriptEntry> = [
  { toolCalls: [{ name: "fs_read", args: { path: "inbox/mail.txt" } }] },
  { text: "Summarised." }
]

const recorded = (recordRequests: boolean) =>
  Effect.gen(function*() {
    const requests: Array<LlmRequest> = []
    const layer = TestLayer({
      config: { traces: { recordRequests } },
      llm: LlmFunction((request) => {
        const last = request.messages.at(-1)
        if (last?.role === "user" && last.content === "hello") return { text: "Hi." }
        requests.push(request)
        return script[requests.length - 1] ?? { text: "out of script" }
      })
    })
    const traces = yield* Effect.gen(function*() {
      const workspace = yield* Workspace
      yield* Effect.promise(() => NodeFs.mkdir(NodePath.join(workspace.root, "inbox")))
      yield* writeFile(workspace, "inbox/mail.txt", "Dear owner, the meeting moved to Friday.")
      const runtime = yield* AgentRuntime
      const first = yield* runtime.handle({ userMessage: "hello", sessionId: "s", channel: "cli:me" })
      const second = yield* runtime.handle({ userMessage: "summarise my mail", sessionId: "s", channel: "cli:me" })
      return [first, second] as const
    }).pipe(Effect.provide(layer))
    return { requests, traces }
  })

describe("what a trace records for its replay", () => {
  it.scoped("the format, every id the turn drew, the history its prompt held and each request's fingerprint", () =>
    Effect.gen(function*() {
      const { requests, traces: [first, second] } = yield* recorded(false)
      assert.strictEqual(second.format, TRACE_FORMAT)
      const ids = second.replay!.ids
      assert.deepStrictEqual(ids[0], { kind: "trace", id: second.trace_id })
      const wrapper = ids.find((drawn) => drawn.kind === "wrapper")
      assert.isDefined(wrapper)
      assert.include(JSON.stringify(requests[1]!.messages), wrapper!.id)
      // The first turn's draws are not the second's.
      assert.isFalse(ids.some((drawn) => drawn.id === first.trace_id))
      assert.deepStrictEqual(second.replay!.history, [{ user_message: "hello", final_response: "Hi." }])
      const thoughts = second.steps.filter((step) => step.kind === "thought")
      assert.strictEqual(thoughts.length, 2)
      thoughts.forEach((thought, i) => assert.deepStrictEqual(thought.request_hash, fingerprintRequest(requests[i]!)))
      assert.isUndefined(thoughts[0]!.request)
    }))

  it.scoped("with traces.recordRequests the whole request is kept, its timestamps and wrapper ids masked", () =>
    Effect.gen(function*() {
      const { requests, traces: [, second] } = yield* recorded(true)
      const thought = second.steps[2]
      assert.strictEqual(thought?.kind, "thought")
      // Where it always was in the trace's line: the fingerprint, then the request, last.
      assert.deepStrictEqual(Object.keys(thought ?? {}).slice(-2), ["request_hash", "request"])
      assert.deepStrictEqual(
        thought?.kind === "thought" ? thought.request_hash : null,
        fingerprintRequest(requests[1]!)
      )
      const text = JSON.stringify(thought?.kind === "thought" ? thought.request : null)
      assert.include(text, "meeting moved to Friday")
      assert.include(text, "<untrusted id=\\\"<id>\\\"")
      assert.include(text, "retrieved_at=\\\"<time>\\\"")
      assert.notInclude(JSON.stringify(requests[1]), "<time>")
    }))

  it.scoped("a trace written before these fields existed still decodes", () =>
    Effect.gen(function*() {
      const { traces: [, second] } = yield* recorded(false)
      const old = JSON.parse(JSON.stringify(encodeTrace(second))) as Record<string, unknown>
      delete old.format
      delete old.replay
      for (const step of old.steps as Array<Record<string, unknown>>) delete step.request_hash
      const decoded = yield* Effect.either(decodeTrace(old))
      assert.isTrue(Either.isRight(decoded))
    }))

  it("the fingerprint ignores times and wrapper ids, and sees any other change", () => {
    const request = (content: string): LlmRequest => ({
      tier: "frontier",
      system: [{ name: "constitution", text: "be kind", stable: true }],
      messages: [{ role: "user", content }],
      tools: []
    })
    const a = fingerprintRequest(request("<untrusted id=\"aa\" retrieved_at=\"2026-01-01T00:00:00.000Z\">x"))
    const b = fingerprintRequest(request("<untrusted id=\"bb\" retrieved_at=\"2026-02-03T10:11:12.013Z\">x"))
    const c = fingerprintRequest(request("<untrusted id=\"bb\" retrieved_at=\"2026-02-03T10:11:12.013Z\">y"))
    assert.deepStrictEqual(a, b)
    assert.notStrictEqual(c.messages, b.messages)
    assert.strictEqual(c.system, b.system)
  })
})
