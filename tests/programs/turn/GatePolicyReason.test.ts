import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { defineTool } from "../../../src/domain/Tool.js"
import { actionStep, Gate } from "../../../src/programs/turn/Gate.js"
import type { PolicyDecision } from "../../../src/services/Policy.js"

const note = defineTool({
  name: "note",
  description: "Writes a note.",
  parameters: Schema.Struct({ path: Schema.String }),
  hasSideEffects: true,
  external: false,
  targetKind: "path",
  target: ({ path }) => path,
  execute: () => Effect.dieMessage("a gate test never runs its tool")
})

const stepFor = (decision: PolicyDecision, path = "notes/a.md") => {
  const call = { id: "call_1", name: "note", args: { path } }
  const prepared = Either.getOrThrow(note.prepare(call.args))
  return actionStep(Gate.Run({ call, tool: note, prepared, decision, approval: null, approvalRequestId: null }))
}

describe("the policy reason an ActionStep records", () => {
  it("is the rule and its reason, the same text for every step the same decision judged", () => {
    const decision: PolicyDecision = { verdict: "allow", rule: "note:notes/*", reason: "notes are free to write" }
    const first = stepFor(decision)
    const second = stepFor({ ...decision })
    assert.strictEqual(first.policy_reason, "note:notes/*: notes are free to write")
    assert.strictEqual(second.policy_reason, first.policy_reason)
    assert.strictEqual(
      stepFor({ ...decision, reason: "another reason" }).policy_reason,
      "note:notes/*: another reason"
    )
  })

  it("stays exact for reasons that name their target, however many there are", () => {
    // More distinct texts than are kept to share: past that bound each step makes its own.
    for (let i = 0; i < 3000; i++) {
      const decision: PolicyDecision = {
        verdict: "approve_required",
        rule: i % 2 === 0 ? "default:side-effects" : "note:drafts/*",
        reason: `the tool changes things (drafts/${i}.md leads to notes/${i}.md)`
      }
      assert.strictEqual(stepFor(decision, `drafts/${i}.md`).policy_reason, `${decision.rule}: ${decision.reason}`)
    }
    const again: PolicyDecision = {
      verdict: "approve_required",
      rule: "default:side-effects",
      reason: "the tool changes things (drafts/0.md leads to notes/0.md)"
    }
    assert.strictEqual(stepFor(again, "drafts/0.md").policy_reason, `${again.rule}: ${again.reason}`)
  })
})

const scaled = defineTool({
  name: "scaled",
  description: "Takes a count, 1 when left out, and a list of tags.",
  parameters: Schema.Struct({
    count: Schema.optionalWith(Schema.Number, { default: () => 1 }),
    tags: Schema.Array(Schema.String)
  }),
  hasSideEffects: false,
  external: false,
  targetKind: "none",
  target: () => "",
  execute: () => Effect.dieMessage("a gate test never runs its tool")
})

const scaledStep = (args: unknown) => {
  const call = { id: "call_1", name: "scaled", args }
  const prepared = Either.getOrThrow(scaled.prepare(call.args))
  const decision: PolicyDecision = { verdict: "allow", rule: "default:read-only", reason: "reads nothing" }
  return {
    call,
    prepared,
    step: actionStep(Gate.Run({ call, tool: scaled, prepared, decision, approval: null, approvalRequestId: null }))
  }
}

describe("the arguments an ActionStep records", () => {
  it("are the call's own object when validation gave back the same JSON", () => {
    const { call, prepared, step } = scaledStep({ count: 2, tags: ["a", "b"] })
    assert.notStrictEqual(prepared.args, call.args, "validation decodes a copy")
    assert.strictEqual(step.args, call.args)
  })

  it("are the validated ones when validation changed them, or their keys came in another order", () => {
    const defaulted = scaledStep({ tags: ["a"] })
    assert.strictEqual(defaulted.step.args, defaulted.prepared.args)
    assert.deepStrictEqual(defaulted.step.args, { tags: ["a"], count: 1 })
    const reordered = scaledStep({ tags: ["a"], count: 2 })
    assert.strictEqual(reordered.step.args, reordered.prepared.args)
    assert.strictEqual(JSON.stringify(reordered.step.args), JSON.stringify(reordered.prepared.args))
  })
})
