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
