import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import { ownerAnswer } from "../../../src/layers/approvals/ApprovalChannelScripted.js"
import type { ApprovalDecision, PendingApproval } from "../../../src/services/Approvals.js"
import { approvalRecords, makeHarness, makeRequest, makeSwitchableAudit } from "./Harness.js"

/** The first request gets `first`, every later one is denied: a grant shows as a verdict nobody was asked for. */
const firstThenDeny = (first: ApprovalDecision) => (pending: PendingApproval) =>
  Option.some(ownerAnswer(pending, pending.request.traceId === "t_1" ? first : { _tag: "Deny" }))

describe("ApprovalsLive grants", () => {
  it.scoped("batch window: granted for 10 minutes, reused via batch (audited), asked again once it expires", () =>
    Effect.gen(function*() {
      const { approvals, audit, presented } = yield* makeHarness({
        respond: firstThenDeny({ _tag: "ForMinutes", minutes: 10 })
      })
      const opened = yield* approvals.request(makeRequest())
      assert.deepStrictEqual([opened.granted, opened.via], [true, "scripted"])

      yield* TestClock.adjust("9 minutes")
      const request = makeRequest({ traceId: "t_2", args: { path: "notes/todo.md", content: "and eggs" } })
      const reused = yield* approvals.request(request)
      assert.deepStrictEqual([reused.granted, reused.via, reused.argsHash], [true, "batch", request.argsHash])
      assert.notStrictEqual(reused.requestId, opened.requestId)
      assert.strictEqual((yield* presented.all).length, 1, "nobody was asked inside the window")
      const use = (yield* approvalRecords(audit)).find((record) => record.event === "batch_use")
      assert.deepStrictEqual(
        [use?.request_id, use?.trace_id, use?.granted, use?.via, use?.args_hash, use?.batch_window_expires_at],
        [reused.requestId, "t_2", true, "batch", request.argsHash, "2026-04-22T14:13:22.000Z"]
      )
      assert.include(use?.reason, opened.requestId!)

      yield* TestClock.adjust("1 minute")
      const after = yield* approvals.request(makeRequest({ traceId: "t_3" }))
      assert.deepStrictEqual([after.granted, after.via], [false, "scripted"], "asked again once the window closed")
      assert.strictEqual((yield* presented.all).length, 2)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a window longer than a day is granted for a day, not turned into a crash", () =>
    Effect.gen(function*() {
      const { approvals, audit } = yield* makeHarness({
        respond: firstThenDeny({ _tag: "ForMinutes", minutes: 999_999_999_999_999 })
      })
      const opened = yield* approvals.request(makeRequest())
      assert.deepStrictEqual([opened.granted, opened.via], [true, "scripted"])
      const verdict = (yield* approvalRecords(audit)).find((record) => record.event === "verdict")
      assert.strictEqual(verdict?.batch_window_expires_at, "2026-04-23T14:03:22.000Z")
      yield* TestClock.adjust("1 day")
      const after = yield* approvals.request(makeRequest({ traceId: "t_2" }))
      assert.deepStrictEqual([after.granted, after.via], [false, "scripted"], "asked again after the day")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a grant covers the same tool and target (or the owner's glob) in the same session only", () =>
    Effect.gen(function*() {
      const { approvals, presented } = yield* makeHarness({
        respond: firstThenDeny({ _tag: "ForMinutes", minutes: 10, targetGlob: "notes/*" })
      })
      assert.isTrue((yield* approvals.request(makeRequest())).granted)
      const covered = yield* approvals.request(makeRequest({ traceId: "t_2", target: "notes/other.md" }))
      assert.strictEqual(covered.via, "batch")
      const cases = [
        makeRequest({ traceId: "t_3", target: "notes/deep/x.md" }),
        makeRequest({ traceId: "t_4", target: "secrets.md" }),
        makeRequest({ traceId: "t_5", tool: "fs_delete" }),
        makeRequest({ traceId: "t_6", sessionId: "s_alice_2" })
      ]
      for (const request of cases) {
        const verdict = yield* approvals.request(request)
        assert.deepStrictEqual([verdict.granted, verdict.via], [false, "scripted"], request.traceId)
      }
      assert.strictEqual((yield* presented.all).length, 5)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("the default scope of a grant is the exact target, even one that looks like a glob", () =>
    Effect.gen(function*() {
      const { approvals } = yield* makeHarness({ respond: firstThenDeny({ _tag: "ForSession" }) })
      assert.isTrue((yield* approvals.request(makeRequest({ target: "notes/*.md" }))).granted)
      const same = yield* approvals.request(makeRequest({ traceId: "t_2", target: "notes/*.md" }))
      assert.deepStrictEqual([same.granted, same.via], [true, "session"])
      const other = yield* approvals.request(makeRequest({ traceId: "t_3", target: "notes/a.md" }))
      assert.deepStrictEqual([other.granted, other.via], [false, "scripted"])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a session grant lasts for the session: still used hours later", () =>
    Effect.gen(function*() {
      const { approvals, audit } = yield* makeHarness({ respond: firstThenDeny({ _tag: "ForSession" }) })
      yield* approvals.request(makeRequest())
      yield* TestClock.adjust("12 hours")
      const later = yield* approvals.request(makeRequest({ traceId: "t_2" }))
      assert.deepStrictEqual([later.granted, later.via], [true, "session"])
      const verdict = (yield* approvalRecords(audit)).find((record) => record.event === "verdict")
      assert.strictEqual(verdict?.batch_window_expires_at, null)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("tainted: asked again despite a batch grant, and the question names the untrusted sources", () =>
    Effect.gen(function*() {
      const { approvals, audit, presented } = yield* makeHarness({
        respond: firstThenDeny({ _tag: "ForMinutes", minutes: 10 })
      })
      yield* approvals.request(makeRequest())
      const sources = ["web_fetch:evil.example", "file:inbox/mail.eml"]
      const tainted = makeRequest({ traceId: "t_2", tainted: { sources } })
      const verdict = yield* approvals.request(tainted)
      assert.deepStrictEqual([verdict.granted, verdict.via], [false, "scripted"], "asked, and the owner said no")
      const shown = (yield* presented.all).at(-1)
      assert.deepStrictEqual(shown?.request.tainted?.sources, sources)
      const requested = (yield* approvalRecords(audit)).filter((record) => record.event === "requested").at(-1)
      assert.strictEqual(
        requested?.reason,
        "side effects need approval; follows untrusted content from: web_fetch:evil.example, file:inbox/mail.eml"
      )
      assert.isUndefined((yield* approvalRecords(audit)).find((record) => record.event === "batch_use"))
      const clean = yield* approvals.request(makeRequest({ traceId: "t_3" }))
      assert.strictEqual(clean.via, "batch", "the grant still serves requests without untrusted content")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a batch use that cannot be audited is denied", () =>
    Effect.gen(function*() {
      const { audit, fail } = yield* makeSwitchableAudit
      const { approvals } = yield* makeHarness({ audit, respond: firstThenDeny({ _tag: "ForSession" }) })
      assert.isTrue((yield* approvals.request(makeRequest())).granted)
      fail()
      const verdict = yield* approvals.request(makeRequest({ traceId: "t_2" }))
      assert.deepStrictEqual([verdict.granted, verdict.via], [false, "audit_failed"])
    }).pipe(Effect.provide(NodeContext.layer)))
})
