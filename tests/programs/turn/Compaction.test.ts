import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { LlmRequest } from "../../../src/domain/LlmTypes.js"
import { fingerprintRequest } from "../../../src/domain/RequestFingerprint.js"
import type { ScriptEntry } from "../../../src/domain/ScriptEntry.js"
import { LlmFunction } from "../../../src/layers/llm/LlmScripted.js"
import { SessionsSqlite } from "../../../src/layers/sessions/SessionsSqlite.js"
import { TestLayer } from "../../../src/layers/Test.js"
import { truncationNote } from "../../../src/programs/turn/Compact.js"
import { AgentRuntime } from "../../../src/services/AgentRuntime.js"
import { Sessions } from "../../../src/services/Sessions.js"
import { thoughts } from "../../contract/fixtures.js"

const isSummary = (request: LlmRequest) => request.system[0]?.name === "summariser"

/** A model that answers turns with `answer N` and summaries with `summarise(request)`; it keeps every request. */
const model = (summarise: (request: LlmRequest) => ScriptEntry) => {
  const requests: Array<LlmRequest> = []
  const layer = LlmFunction((request) => {
    requests.push(request)
    if (isSummary(request)) return summarise(request)
    return { text: `answer ${requests.filter((r) => !isSummary(r)).length}`, usage: { input: 100, output: 5 } }
  })
  return { requests, layer }
}

const turns = (count: number, from = 1) =>
  Effect.gen(function*() {
    const runtime = yield* AgentRuntime
    const traces = []
    for (let n = from; n < from + count; n++) {
      traces.push(yield* runtime.handle({ userMessage: `question ${n}`, sessionId: "s", channel: "cli:alice" }))
    }
    return traces
  })

/** The production sessions store, counting the history reads. */
const countingReads = () => {
  const reads: Array<string> = []
  const layer = Layer.effect(
    Sessions,
    Effect.map(Sessions, (sessions) => ({
      ...sessions,
      history: (sessionId: string, owner: string) => {
        reads.push(sessionId)
        return sessions.history(sessionId, owner)
      }
    }))
  ).pipe(Layer.provide(SessionsSqlite))
  return { reads, layer }
}

describe("Session compression", () => {
  it.scoped("a turn reads its session's history once, a turn that stores a summary included", () => {
    const llm = model(() => ({ text: "SUMMARY: earlier questions." }))
    const sessions = countingReads()
    return Effect.gen(function*() {
      yield* turns(20)
      assert.strictEqual(sessions.reads.length, 20)
      yield* turns(1, 21)
      assert.strictEqual(sessions.reads.length, 21)
      const block = llm.requests.at(-1)!.system.find((b) => b.name === "summary")
      assert.include(block?.text ?? "", "SUMMARY: earlier questions.")
    }).pipe(Effect.provide(TestLayer({ llm: llm.layer, sessions: sessions.layer })))
  })

  it.scoped("the 21st turn makes exactly one summary call, on local-fast; its prompt holds the summary + 5 turns", () => {
    const llm = model(() => ({ text: "SUMMARY: the owner asked 15 questions.", usage: { input: 900, output: 300 } }))
    return Effect.gen(function*() {
      yield* turns(20)
      assert.strictEqual(llm.requests.filter(isSummary).length, 0)
      const [twentyFirst] = yield* turns(1, 21)
      const summaries = llm.requests.filter(isSummary)
      assert.strictEqual(summaries.length, 1)
      const [summaryCall] = summaries
      assert.strictEqual(summaryCall!.tier, "local-fast")
      assert.include(summaryCall!.messages[0]!.content, "Turn 15, the owner: question 15")
      assert.notInclude(summaryCall!.messages[0]!.content, "question 16")
      const main = llm.requests.at(-1)!
      assert.isFalse(isSummary(main))
      const block = main.system.find((b) => b.name === "summary")
      assert.include(block?.text ?? "", "SUMMARY: the owner asked 15 questions.")
      assert.isFalse(block?.stable)
      assert.deepStrictEqual(
        main.messages.filter((m) => m.role === "user").map((m) => m.content),
        ["question 16", "question 17", "question 18", "question 19", "question 20", "question 21"]
      )
      // The summary call is a step of the turn's trace, and its cost is the turn's.
      assert.strictEqual(thoughts(twentyFirst!).length, 2)
      assert.strictEqual(thoughts(twentyFirst!)[0]!.text, "SUMMARY: the owner asked 15 questions.")
      assert.strictEqual(twentyFirst!.outcome, "success")
      // The next turn folds the turn that leaves the verbatim window into the summary: still summary + 5 turns.
      yield* turns(1, 22)
      assert.strictEqual(llm.requests.filter(isSummary).length, 2)
      assert.deepStrictEqual(
        llm.requests.at(-1)!.messages.filter((m) => m.role === "user").map((m) => m.content),
        ["question 17", "question 18", "question 19", "question 20", "question 21", "question 22"]
      )
    }).pipe(Effect.provide(TestLayer({ llm: llm.layer })))
  })

  it.scoped("past the 21st turn, each turn folds the one leaving the last 5 into the summary", () => {
    let n = 0
    const llm = model(() => ({ text: `SUMMARY ${++n}` }))
    return Effect.gen(function*() {
      yield* turns(30)
      const summaries = llm.requests.filter(isSummary)
      // One per turn from the 21st on: each folds the turn that left the verbatim window.
      assert.strictEqual(summaries.length, 10)
      const second = summaries[1]!.messages[0]!.content
      assert.include(second, "<previous-summary>\nSUMMARY 1\n</previous-summary>")
      assert.include(second, "Turn 16, the owner")
      assert.notInclude(second, "Turn 15, the owner")
      assert.notInclude(second, "Turn 17, the owner")
      const last = llm.requests.at(-1)!
      assert.include(last.system.find((b) => b.name === "summary")!.text, "SUMMARY 10")
      assert.deepStrictEqual(
        last.messages.filter((m) => m.role === "user").map((m) => m.content),
        ["question 25", "question 26", "question 27", "question 28", "question 29", "question 30"]
      )
    }).pipe(Effect.provide(TestLayer({ llm: llm.layer })))
  })

  it.scoped("after /new, only the new conversation counts: no summary until it has 20 turns of its own", () => {
    const llm = model(() => ({ text: "SUMMARY of the old conversation" }))
    return Effect.gen(function*() {
      yield* turns(21)
      assert.strictEqual(llm.requests.filter(isSummary).length, 1)
      const runtime = yield* AgentRuntime
      yield* runtime.handle({ userMessage: "/new", sessionId: "s", channel: "cli:alice" })
      yield* turns(3, 22)
      assert.strictEqual(llm.requests.filter(isSummary).length, 1)
      const last = llm.requests.at(-1)!
      assert.isUndefined(last.system.find((b) => b.name === "summary"))
      assert.deepStrictEqual(
        last.messages.filter((m) => m.role === "user").map((m) => m.content),
        ["question 22", "question 23", "question 24"]
      )
      yield* turns(18, 25)
      const summaries = llm.requests.filter(isSummary)
      assert.strictEqual(summaries.length, 2)
      // The new conversation's first summary starts from its own first turn, without the old summary.
      assert.include(summaries[1]!.messages[0]!.content, "Turn 23, the owner: question 22")
      assert.notInclude(summaries[1]!.messages[0]!.content, "previous-summary")
      assert.notInclude(summaries[1]!.messages[0]!.content, "question 21")
    }).pipe(Effect.provide(TestLayer({ llm: llm.layer })))
  })

  it.scoped("a summary that fails falls back to truncation with a note, and the turn succeeds", () => {
    const llm = model(() => ({ error: { reason: "BadResponse", message: "the local model is down" } }))
    return Effect.gen(function*() {
      yield* turns(20)
      const [twentyFirst] = yield* turns(1, 21)
      assert.strictEqual(twentyFirst!.outcome, "success")
      assert.strictEqual(twentyFirst!.final_response, "answer 21")
      assert.include(String(twentyFirst!.metadata.summary_failed), "the local model is down")
      const main = llm.requests.at(-1)!
      assert.include(
        main.system.find((b) => b.name === "summary")!.text,
        "Turns 1-15 of this conversation are not shown"
      )
      assert.strictEqual(main.messages.filter((m) => m.role === "user").length, 6)
      // Failures in a row widen the one note instead of adding one per turn.
      yield* turns(2, 22)
      const note = llm.requests.at(-1)!.system.find((b) => b.name === "summary")!.text
      assert.include(note, truncationNote(1, 17, "the local model is down"))
      assert.strictEqual(note.split("are not shown").length, 2)
    }).pipe(Effect.provide(TestLayer({ llm: llm.layer })))
  })
})

describe("Turn history compression", () => {
  it.scoped("blocks 6+7 over 16k tokens: the turn's own history is summarised before the next Thought", () => {
    const requests: Array<LlmRequest> = []
    const layer = LlmFunction((request) => {
      requests.push(request)
      if (isSummary(request)) return { text: "TURN SUMMARY: now was called." }
      const last = request.messages.at(-1)!
      if (last.role === "user" && last.content === "what time is it?") {
        return { toolCalls: [{ name: "now", args: {} }] }
      }
      return { text: "done" }
    })
    return Effect.gen(function*() {
      const runtime = yield* AgentRuntime
      yield* runtime.handle({ userMessage: "x".repeat(60_000), sessionId: "s", channel: "cli:alice" })
      const trace = yield* runtime.handle({ userMessage: "what time is it?", sessionId: "s", channel: "cli:alice" })
      assert.strictEqual(trace.outcome, "success")
      const summaries = requests.filter(isSummary)
      assert.strictEqual(summaries.length, 1)
      assert.strictEqual(summaries[0]!.tier, "local-fast")
      assert.include(summaries[0]!.messages[0]!.content, "calls now")
      const last = requests.at(-1)!
      assert.isFalse(isSummary(last))
      assert.deepStrictEqual(last.messages.map((m) => m.role), ["user", "assistant", "user"])
      assert.include(last.messages[2]!.content, "what time is it?")
      assert.include(last.messages[2]!.content, "TURN SUMMARY: now was called.")
      assert.strictEqual(thoughts(trace).length, 3, "the Thought with the call, the summary, the answer")
      // Each Thought's fingerprint is its own request's, the one asked before the history was replaced included.
      thoughts(trace).forEach((thought, i) =>
        assert.deepStrictEqual(thought.request_hash, fingerprintRequest(requests.slice(-3)[i]!))
      )
    }).pipe(Effect.provide(TestLayer({ llm: layer })))
  })
})
