import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Schema } from "effect"
import type { SealedRecord } from "../../../src/domain/AuditRecord.js"
import type { ExecutionTrace } from "../../../src/domain/ExecutionTrace.js"
import { defineTool, type Tool } from "../../../src/domain/Tool.js"
import { TestLayer } from "../../../src/layers/Test.js"
import { AgentRuntime } from "../../../src/services/AgentRuntime.js"
import type { ApprovalRequest } from "../../../src/services/Approvals.js"
import { AuditLog } from "../../../src/services/AuditLog.js"
import { PlanCache } from "../../../src/services/PlanCache.js"
import { Policy } from "../../../src/services/Policy.js"
import { Workspace } from "../../../src/services/Workspace.js"
import { actions, probeTools, recordingLlm, thoughts, writeFile } from "../../contract/fixtures.js"

const turn = (message: string) =>
  Effect.flatMap(AgentRuntime, (agent) => agent.handle({ userMessage: message, sessionId: "s", channel: "cli:me" }))

/** Read todo.txt, copy it to done.txt: the second call's content is the first call's result. */
const copyScript = [
  { toolCalls: [{ name: "fs_read", args: { path: "todo.txt" } }] },
  { toolCalls: [{ name: "fs_write", args: { path: "done.txt", content: "buy milk" } }] },
  { text: "Copied your list to done.txt." }
]

/** What a turn's audit records say, without the ids and times that differ from turn to turn. */
const shape = (records: ReadonlyArray<SealedRecord>) =>
  records.filter((record) => record.kind !== "trace").map((record) => {
    const { at: _at, trace_id: _t, hash: _h, prev: _p, seq: _s, request_id: _r, approval_request_id: _a, ...rest } =
      record as unknown as Record<string, unknown>
    return rest
  })
const recordsOf = (trace: ExecutionTrace) =>
  Effect.map(
    Effect.flatMap(AuditLog, (audit) => audit.query({ limit: 100 })),
    (records) => records.filter((record) => "trace_id" in record && record.trace_id === trace.trace_id).reverse()
  )

describe("the fast path", () => {
  it.scoped("a repeated request reuses the plan: no frontier call, the same gates and audit records", () => {
    const llm = recordingLlm([...copyScript, { text: "Copied again." }])
    const asked: Array<ApprovalRequest> = []
    return Effect.gen(function*() {
      yield* writeFile(yield* Workspace, "todo.txt", "buy milk")
      const first = yield* turn("Copy my todo list to done.txt")
      assert.strictEqual(first.path, "react")
      assert.strictEqual(first.path_reason, "no cached plan for this request")
      const [cached] = yield* (yield* PlanCache).list
      assert.deepStrictEqual(cached!.plan.steps, [
        { tool: "fs_read", args: { path: "todo.txt" } },
        { tool: "fs_write", args: { path: "done.txt", content: { from_step: 1 } } }
      ])
      yield* writeFile(yield* Workspace, "todo.txt", "buy eggs")
      const second = yield* turn("copy my todo list to done.txt.")
      assert.strictEqual(second.outcome, "success")
      assert.strictEqual(second.path, "fast")
      assert.include(second.path_reason ?? "", cached!.id)
      assert.strictEqual(second.final_response, "Copied again.")
      // The plan's reference took this run's result, not the cached one.
      assert.strictEqual(yield* probeTools.read(yield* Workspace, "done.txt"), "buy eggs")
      assert.deepStrictEqual(llm.requests.slice(3).map((request) => request.tier), ["local-fast"])
      assert.strictEqual(thoughts(second).length, 1)
      assert.strictEqual(asked.length, 2)
      assert.deepStrictEqual(actions(second).map((step) => step.policy_decision), ["allow", "approve_required"])
      const audited = (records: ReadonlyArray<Record<string, unknown>>) =>
        records.map((r) => [r.kind, r.event ?? null, r.tool_name ?? null, r.target ?? null, r.decision ?? null])
      const firstRecords = audited(shape(yield* recordsOf(first)))
      assert.deepStrictEqual(firstRecords, [
        ["approval", "requested", "fs_write", null, null],
        ["approval", "verdict", "fs_write", null, null],
        ["tool_decision", null, "fs_write", "done.txt", "approve_required"]
      ])
      assert.deepStrictEqual(audited(shape(yield* recordsOf(second))), firstRecords)
      assert.strictEqual(Option.getOrThrow(yield* (yield* PlanCache).get(cached!.id)).successes, 2)
    }).pipe(Effect.provide(TestLayer({ llm: llm.layer, approve: (request) => (asked.push(request), true) })))
  })

  it.scoped("a deterministic answer is filled from the results: no model call at all", () => {
    const llm = recordingLlm([
      { toolCalls: [{ name: "fs_read", args: { path: "todo.txt" } }] },
      { text: "Your list: buy milk" }
    ])
    return Effect.gen(function*() {
      yield* writeFile(yield* Workspace, "todo.txt", "buy milk")
      yield* turn("what is on my list?")
      yield* writeFile(yield* Workspace, "todo.txt", "buy eggs")
      const again = yield* turn("What is on my list?")
      assert.strictEqual(again.path, "fast")
      assert.strictEqual(again.final_response, "Your list: buy eggs")
      assert.strictEqual(llm.requests.length, 2)
    }).pipe(Effect.provide(TestLayer({ llm: llm.layer })))
  })

  it.scoped("a tool whose schema changed invalidates the plan: the turn falls back and says why", () => {
    let schema: Schema.Schema.AnyNoContext = Schema.Struct({ name: Schema.String })
    const base = defineTool({
      name: "greet",
      description: "Greet someone.",
      parameters: Schema.Struct({ name: Schema.String }),
      hasSideEffects: false,
      external: false,
      execute: ({ name }) => Effect.succeed({ status: "success", content: `hello ${name}` } as const)
    })
    const greet: Tool = Object.defineProperty({ ...base }, "parameters", { get: () => schema })
    const llm = recordingLlm([
      { toolCalls: [{ name: "greet", args: { name: "Ada" } }] },
      { text: "I said hello." },
      { toolCalls: [{ name: "greet", args: { name: "Ada" } }] },
      { text: "I said hello again." }
    ])
    return Effect.gen(function*() {
      yield* turn("greet Ada")
      schema = Schema.Struct({ name: Schema.String, loud: Schema.optional(Schema.Boolean) })
      const again = yield* turn("greet Ada")
      assert.strictEqual(again.path, "react")
      assert.include(again.path_reason ?? "", "the tool greet changed (schema or version) since the plan was cached")
      assert.strictEqual(llm.requests[2]!.tier, "frontier")
    }).pipe(Effect.provide(TestLayer({ llm: llm.layer, tools: [greet] })))
  })

  it.scoped("a policy that now denies stops the fast path exactly as it stops a fresh call", () => {
    const llm = recordingLlm(copyScript)
    return Effect.gen(function*() {
      yield* writeFile(yield* Workspace, "todo.txt", "buy milk")
      yield* turn("copy my todo list to done.txt")
      yield* (yield* Policy).setRules([{ match: "fs_write:done.txt", decision: "deny", reason: "no more copies" }])
      const again = yield* turn("copy my todo list to done.txt")
      assert.strictEqual(again.path, "fast")
      assert.strictEqual(again.outcome, "policy_denied")
      assert.include(again.final_response ?? "", "denied by the policy rule")
      assert.strictEqual(actions(again)[1]!.policy_decision, "deny")
      assert.strictEqual(actions(again)[1]!.exec_result, null)
      assert.strictEqual(llm.requests.length, 3)
    }).pipe(Effect.provide(TestLayer({ llm: llm.layer, approve: () => true })))
  })

  it.scoped("an approval is still asked on the fast path, and a refusal stops it", () => {
    const asked: Array<ApprovalRequest> = []
    let grant = true
    const llm = recordingLlm(copyScript)
    return Effect.gen(function*() {
      yield* writeFile(yield* Workspace, "todo.txt", "buy milk")
      yield* turn("copy my todo list to done.txt")
      grant = false
      yield* writeFile(yield* Workspace, "todo.txt", "buy eggs")
      const again = yield* turn("copy my todo list to done.txt")
      assert.strictEqual(again.path, "fast")
      assert.strictEqual(asked.length, 2)
      assert.strictEqual(asked[1]!.summary, "write 8 bytes to done.txt")
      assert.strictEqual(again.outcome, "user_aborted")
      assert.strictEqual(yield* probeTools.read(yield* Workspace, "done.txt"), "buy milk")
    }).pipe(Effect.provide(TestLayer({ llm: llm.layer, approve: (request) => (asked.push(request), grant) })))
  })

  it.scoped("a producer that returns nothing makes its consumer fail clearly; the turn falls back", () => {
    const llm = recordingLlm([...copyScript, { text: "todo.txt is empty: nothing to copy." }])
    return Effect.gen(function*() {
      const workspace = yield* Workspace
      yield* writeFile(workspace, "todo.txt", "buy milk")
      yield* turn("copy my todo list to done.txt")
      yield* writeFile(workspace, "todo.txt", "")
      const again = yield* turn("copy my todo list to done.txt")
      assert.strictEqual(again.path, "react")
      assert.include(again.path_reason ?? "", "step 2: step 1 (fs_read) returned nothing (empty)")
      assert.strictEqual(actions(again).length, 1)
      assert.strictEqual(yield* probeTools.read(workspace, "done.txt"), "buy milk")
      assert.strictEqual(again.final_response, "todo.txt is empty: nothing to copy.")
    }).pipe(Effect.provide(TestLayer({ llm: llm.layer, approve: () => true })))
  })

  it.scoped("plans off: a repeated request goes through the loop again, and the trace says why", () => {
    const llm = recordingLlm([...copyScript, ...copyScript])
    return Effect.gen(function*() {
      yield* writeFile(yield* Workspace, "todo.txt", "buy milk")
      for (const message of ["Copy my todo list to done.txt", "copy my todo list to done.txt."]) {
        const trace = yield* turn(message)
        assert.strictEqual(trace.outcome, "success")
        assert.strictEqual(trace.path, "react")
        assert.strictEqual(trace.path_reason, "plans are off (plans.enabled in myclaw.json)")
        assert.strictEqual(actions(trace).length, 2)
      }
      assert.deepStrictEqual(yield* (yield* PlanCache).list, [], "no plan is kept either")
      assert.deepStrictEqual(llm.requests.map((request) => request.tier), Array(6).fill("frontier"))
    }).pipe(Effect.provide(TestLayer({
      llm: llm.layer,
      approve: () => true,
      config: { plans: { enabled: false, autopath: false, similarity: 0.6 } }
    })))
  })
})
