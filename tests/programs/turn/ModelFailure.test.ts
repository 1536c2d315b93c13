import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { ScriptEntry } from "../../../src/domain/ScriptEntry.js"
import { TestLayer } from "../../../src/layers/Test.js"
import { AgentRuntime } from "../../../src/services/AgentRuntime.js"

const answerTo = (script: ReadonlyArray<ScriptEntry>) =>
  Effect.flatMap(AgentRuntime, (agent) => agent.handle({ userMessage: "do it", sessionId: "s", channel: "cli:me" }))
    .pipe(Effect.provide(TestLayer({
      script,
      config: { policy: { rules: [{ match: "fs_write:*", decision: "allow" }] } }
    })))

describe("a turn whose model call fails", () => {
  it.scoped("before anything ran: the owner is told that nothing else was done", () =>
    Effect.gen(function*() {
      const trace = yield* answerTo([{ error: { reason: "Auth", message: "HTTP 401: invalid api key" } }])
      assert.strictEqual(trace.outcome, "timeout_steps")
      assert.include(trace.final_response ?? "", "Nothing else was done.")
    }))

  it.scoped("after tools ran: the owner is told what ran, never that nothing was done", () =>
    Effect.gen(function*() {
      const trace = yield* answerTo([
        { toolCalls: [{ name: "fs_write", args: { path: "notes/plan.md", content: "step one" } }] },
        { toolCalls: [{ name: "fs_read", args: { path: "notes/plan.md" } }] },
        { error: { reason: "Auth", message: "HTTP 401: invalid api key" } }
      ])
      const said = trace.final_response ?? ""
      assert.notInclude(said, "Nothing else was done")
      assert.include(said, "Before that, this turn ran fs_write and fs_read")
      assert.include(said, `myclaw trace show ${trace.trace_id}`)
    }))

  it.scoped("a conversation too long for the model says how to go on: a new conversation", () =>
    Effect.gen(function*() {
      const trace = yield* answerTo([{
        error: { reason: "ContextTooLong", message: "HTTP 400: This model's maximum context length is 8192 tokens" }
      }])
      assert.include(trace.final_response ?? "", "/new")
    }))
})
