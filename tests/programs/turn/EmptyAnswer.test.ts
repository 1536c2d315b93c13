import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { ScriptEntry } from "../../../src/domain/ScriptEntry.js"
import { TestLayer } from "../../../src/layers/Test.js"
import { AgentRuntime } from "../../../src/services/AgentRuntime.js"

const answerTo = (script: ReadonlyArray<ScriptEntry>) =>
  Effect.flatMap(AgentRuntime, (agent) => agent.handle({ userMessage: "tell me", sessionId: "s", channel: "cli:me" }))
    .pipe(Effect.provide(TestLayer({ script })))

describe("an answer that is empty, or cut at the model's output limit", () => {
  it.scoped("an empty answer at the output limit (a reasoning model that spent it thinking) says so", () =>
    Effect.gen(function*() {
      const trace = yield* answerTo([{ text: "", finishReason: "length" }])
      assert.strictEqual(trace.outcome, "success")
      assert.include(trace.final_response ?? "", "output limit")
      assert.include(trace.final_response ?? "", "maxTokens")
    }))

  it.scoped("an answer cut at the output limit is kept whole and said to be cut", () =>
    Effect.gen(function*() {
      const trace = yield* answerTo([{ text: "The three steps are: first, open the", finishReason: "length" }])
      assert.isTrue((trace.final_response ?? "").startsWith("The three steps are: first, open the\n\n"))
      assert.include(trace.final_response ?? "", "cut at the model's output limit")
    }))

  it.scoped("a tool call cut at the output limit is told to the model as cut, not only as invalid JSON", () =>
    Effect.gen(function*() {
      const cut = "{\"path\": \"notes/long.md\", \"content\": \"Chapter one. It was a dark and"
      const trace = yield* answerTo([
        { toolCalls: [{ name: "fs_write", args: cut }], finishReason: "length" },
        { toolCalls: [{ name: "fs_write", args: "{\"path\": \"notes/x.md\"" }] },
        { text: "unused" }
      ])
      const [first, second] = trace.steps.filter((step) => step.kind === "action")
      assert.include(first?.kind === "action" ? first.validation_error : "", "not valid JSON")
      assert.include(first?.kind === "action" ? first.validation_error : "", "cut at your output limit")
      // Invalid JSON from an answer that was not cut gets no such hint.
      assert.notInclude(second?.kind === "action" ? second.validation_error : "", "output limit")
    }))

  it.scoped("an answer the provider's filter stopped (empty, or cut) says so", () =>
    Effect.gen(function*() {
      const empty = yield* answerTo([{ text: "", finishReason: "content_filter" }])
      assert.strictEqual(empty.outcome, "success")
      assert.include(empty.final_response ?? "", "stopped by the model's provider")
      const cut = yield* answerTo([{ text: "Here is how to", finishReason: "content_filter" }])
      assert.isTrue((cut.final_response ?? "").startsWith("Here is how to\n\n"))
      assert.include(cut.final_response ?? "", "stopped by the model's provider")
    }))

  it.scoped("an empty answer (a refusal, a filter) says the model gave none; a whole answer is left as it is", () =>
    Effect.gen(function*() {
      const empty = yield* answerTo([{ text: "  \n", finishReason: "other" }])
      assert.include(empty.final_response ?? "", "no answer")
      const whole = yield* answerTo([{ text: "All done." }])
      assert.strictEqual(whole.final_response, "All done.")
    }))
})
