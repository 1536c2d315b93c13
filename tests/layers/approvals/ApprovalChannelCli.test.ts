import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Schema } from "effect"
import { AppConfig } from "../../../src/domain/AppConfig.js"
import {
  describePending,
  makeApprovalChannelCli,
  parseReply
} from "../../../src/layers/approvals/ApprovalChannelCli.js"
import { ApprovalsLive } from "../../../src/layers/approvals/ApprovalsLive.js"
import { ApprovalsStoreSqlite } from "../../../src/layers/approvals/Store.js"
import { makeAuditLogMemory } from "../../../src/layers/audit/AuditLogMemory.js"
import { MyclawConfigFixed } from "../../../src/layers/MyclawConfigLive.js"
import { ApprovalChannel, Approvals } from "../../../src/services/Approvals.js"
import { AuditLog } from "../../../src/services/AuditLog.js"
import { approvalRecords, makeRequest, Start, tempFile } from "./Harness.js"

describe("ApprovalChannelCli", () => {
  it("reads y/once, b [N], s; anything else denies", () => {
    const cases: ReadonlyArray<readonly [string, unknown]> = [
      ["y", { _tag: "Once" }],
      [" Once \n", { _tag: "Once" }],
      ["b", { _tag: "ForMinutes", minutes: 10 }],
      ["b 25", { _tag: "ForMinutes", minutes: 25 }],
      ["s", { _tag: "ForSession" }],
      ["", { _tag: "Deny" }],
      ["n", { _tag: "Deny" }],
      ["b 0", { _tag: "Deny" }],
      ["yes please", { _tag: "Deny" }],
      ["bs", { _tag: "Deny" }]
    ]
    for (const [reply, decision] of cases) assert.deepStrictEqual(parseReply(reply), decision, JSON.stringify(reply))
  })

  it("shows action, tool, target, why, exact args, the untrusted sources, and escapes control characters", () => {
    const request = makeRequest({
      summary: "write \u001b[2Jhello",
      args: { path: "notes/todo.md", content: "line\n\u001b[1A" },
      tainted: { sources: ["web_fetch:evil.example"] }
    })
    const text = describePending({ requestId: "ar_1", nonce: "n", expiresAt: Start + 300_000, request }, Start)
    assert.include(text, "action: write \\u001b[2Jhello")
    assert.include(text, "tool:   fs_write on notes/todo.md")
    assert.include(text, "why:    side effects need approval")
    assert.include(text, `args:   ${JSON.stringify(request.args)}`)
    assert.include(text, "This follows untrusted content from: web_fetch:evil.example")
    assert.include(text, "expires in 300 s")
    assert.notInclude(text, "\u001b")
  })

  it.scoped("without a terminal nobody can answer: denied at once, audited, with the reason", () =>
    Effect.gen(function*() {
      const audit = yield* makeAuditLogMemory()
      const context = yield* Layer.build(ApprovalsLive.pipe(
        Layer.provide(Layer.effect(ApprovalChannel, makeApprovalChannelCli(false))),
        Layer.provide(ApprovalsStoreSqlite(yield* tempFile)),
        Layer.provide(Layer.succeed(AuditLog, audit)),
        Layer.provide(MyclawConfigFixed(Schema.decodeUnknownSync(AppConfig)({})))
      ))
      const verdict = yield* Context.get(context, Approvals).request(makeRequest())
      assert.strictEqual(verdict.granted, false)
      assert.strictEqual(verdict.via, "non_interactive")
      assert.include(verdict.reason, "nobody can answer here (no terminal)")
      const events = (yield* approvalRecords(audit)).map((record) => [record.event, record.via])
      assert.deepStrictEqual(events, [["requested", "pending"], ["verdict", "non_interactive"]])
    }).pipe(Effect.provide(NodeContext.layer)))
})
