import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { decodeTrace, pathOf } from "../../../src/domain/ExecutionTrace.js"
import { TestLayer } from "../../../src/layers/Test.js"
import { AgentRuntime } from "../../../src/services/AgentRuntime.js"
import type { ApprovalRequest } from "../../../src/services/Approvals.js"
import { Workspace } from "../../../src/services/Workspace.js"
import { actions, probeTools, recordingLlm, thoughts, writeFile } from "../../contract/fixtures.js"

const turn = (message: string, sessionId = "s") =>
  Effect.flatMap(AgentRuntime, (agent) => agent.handle({ userMessage: message, sessionId, channel: "cli:me" }))

describe("deterministic rules", () => {
  it.scoped("/budget and /status are answered by their rule: no model call, a trace with path rule", () => {
    const llm = recordingLlm([])
    return Effect.gen(function*() {
      const budget = yield* turn("/budget")
      assert.strictEqual(budget.path, "rule")
      assert.strictEqual(budget.outcome, "success")
      assert.include(budget.final_response ?? "", "hard cap 5.00 EUR")
      assert.strictEqual(thoughts(budget).length, 0)
      const status = yield* turn("  /status@myclaw_bot ")
      assert.strictEqual(status.path, "rule")
      // Its own turn is not counted: nothing else runs.
      assert.include(status.final_response ?? "", "running turns: 0\n")
      assert.strictEqual(llm.requests.length, 0)
    }).pipe(Effect.provide(TestLayer({ llm: llm.layer })))
  })

  it.scoped("an unknown command is not a rule: the model answers it", () => {
    const llm = recordingLlm([{ text: "no such command" }])
    return Effect.gen(function*() {
      const trace = yield* turn("/frobnicate")
      assert.strictEqual(pathOf(trace), "react")
      assert.strictEqual(llm.requests.length, 1)
    }).pipe(Effect.provide(TestLayer({ llm: llm.layer })))
  })

  it.scoped("/undo puts back what the last turn wrote, after the owner approves, and only once", () => {
    const asked: Array<ApprovalRequest> = []
    return Effect.gen(function*() {
      const workspace = yield* Workspace
      yield* writeFile(workspace, "notes.md", "old notes")
      const first = yield* turn("replace my notes")
      assert.strictEqual(first.outcome, "success")
      assert.strictEqual(yield* probeTools.read(workspace, "notes.md"), "new notes")
      const undone = yield* turn("/undo")
      assert.strictEqual(undone.path, "rule")
      assert.strictEqual(undone.outcome, "success")
      assert.strictEqual(yield* probeTools.read(workspace, "notes.md"), "old notes")
      assert.strictEqual(asked.length, 2)
      assert.strictEqual(asked[1]!.summary, "write 9 bytes to notes.md")
      assert.strictEqual(actions(undone)[0]!.policy_decision, "approve_required")
      assert.include(undone.final_response ?? "", "restored notes.md")
      assert.strictEqual(undone.metadata.undid, first.trace_id)
      const again = yield* turn("/undo")
      assert.include(again.final_response ?? "", "already undone")
      assert.strictEqual(actions(again).length, 0)
    }).pipe(Effect.provide(TestLayer({
      approve: (request) => (asked.push(request), true),
      script: [{ toolCalls: [{ name: "fs_write", args: { path: "notes.md", content: "new notes" } }] }, {
        text: "done"
      }]
    })))
  })

  it.scoped("/undo quotes the turn it undid without cutting an emoji in half (Telegram refuses half of one)", () =>
    Effect.gen(function*() {
      const workspace = yield* Workspace
      yield* writeFile(workspace, "notes.md", "old notes")
      // The quote keeps 60 characters: the emoji's two halves are the 60th and 61st.
      yield* turn(`${"x".repeat(59)}😀 replace my notes`)
      const undone = yield* turn("/undo")
      assert.strictEqual(undone.outcome, "success")
      assert.isTrue((undone.final_response ?? "").isWellFormed(), undone.final_response ?? "")
      assert.include(undone.final_response ?? "", `("${"x".repeat(59)}")`)
      assert.isTrue((yield* turn("/undo")).final_response?.isWellFormed())
    }).pipe(Effect.provide(TestLayer({
      approve: () => true,
      script: [{ toolCalls: [{ name: "fs_write", args: { path: "notes.md", content: "new notes" } }] }, {
        text: "done"
      }]
    }))))

  it.scoped("/undo that the owner refuses changes nothing", () =>
    Effect.gen(function*() {
      const workspace = yield* Workspace
      yield* writeFile(workspace, "notes.md", "old content")
      assert.strictEqual((yield* turn("replace my notes")).outcome, "success")
      const undone = yield* turn("/undo")
      assert.strictEqual(undone.outcome, "user_aborted")
      assert.strictEqual(yield* probeTools.read(workspace, "notes.md"), "new")
    }).pipe(Effect.provide(TestLayer({
      approve: (request) => request.summary !== "write 11 bytes to notes.md",
      script: [{ toolCalls: [{ name: "fs_write", args: { path: "notes.md", content: "new" } }] }, { text: "done" }]
    }))))

  it.scoped("/new starts the conversation afresh: the next prompt holds no earlier turn", () => {
    const llm = recordingLlm([{ text: "one" }, { text: "two" }, { text: "three" }])
    return Effect.gen(function*() {
      yield* turn("first")
      const second = yield* turn("second")
      assert.strictEqual(second.replay?.history.length, 1)
      const fresh = yield* turn("/new")
      assert.strictEqual(fresh.path, "rule")
      const third = yield* turn("third")
      assert.strictEqual(third.replay?.history.length, 0)
      assert.deepStrictEqual(llm.requests[2]!.messages.map((message) => message.content), ["third"])
    }).pipe(Effect.provide(TestLayer({ llm: llm.layer })))
  })

  it.scoped("/stop with nothing running says so; /resume says there is no paused dialogue", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* turn("/stop")).final_response, "Nothing is running in this session.")
      assert.include((yield* turn("/resume")).final_response ?? "", "no paused dialogue")
    }).pipe(Effect.provide(TestLayer({}))))

  it.effect("a trace written before paths existed decodes, and was served by the ReAct loop", () =>
    Effect.gen(function*() {
      const trace = yield* decodeTrace({
        trace_id: "t",
        session_id: "s",
        channel: "cli:me",
        started_at: "2026-01-01T00:00:00.000Z",
        finished_at: null,
        user_message: "hi",
        steps: [],
        final_response: null,
        cost_usd: 0,
        wall_time_ms: 0,
        outcome: "success",
        metadata: {}
      })
      assert.strictEqual(pathOf(trace), "react")
    }))
})
