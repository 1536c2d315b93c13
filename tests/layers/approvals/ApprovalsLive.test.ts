import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Option, TestClock } from "effect"
import { auditFileOf } from "../../../src/domain/AuditQuery.js"
import { ownerAnswer } from "../../../src/layers/approvals/ApprovalChannelScripted.js"
import { MaxPendingPerSession, verifyApprovedArgs } from "../../../src/layers/approvals/ApprovalsLive.js"
import { makeAuditLogMemory } from "../../../src/layers/audit/AuditLogMemory.js"
import { approvalRecords, makeHarness, makeRequest, makeSwitchableAudit, Start, TimeoutMs } from "./Harness.js"

const once = { _tag: "Once" } as const
const deny = { _tag: "Deny" } as const

describe("ApprovalsLive", () => {
  it.scoped("granted: the owner's answer with the nonce grants, bound to the request id and the args hash", () =>
    Effect.gen(function*() {
      const { approvals, audit, presented } = yield* makeHarness({ respond: (p) => Option.some(ownerAnswer(p, once)) })
      const request = makeRequest()
      const verdict = yield* approvals.request(request)
      const [pending] = yield* presented.all
      assert.isDefined(pending)
      assert.deepStrictEqual(verdict, {
        granted: true,
        via: "scripted",
        reason: "approved once by cli:alice",
        requestId: pending!.requestId,
        argsHash: request.argsHash
      })
      assert.match(pending!.requestId, /^ar_[0-9a-f]{24}$/)
      assert.match(pending!.nonce, /^[0-9a-f]{32}$/)
      assert.strictEqual(pending!.expiresAt, Start + TimeoutMs)
      const reordered = { content: "buy milk", path: "notes/todo.md" }
      assert.isTrue(verifyApprovedArgs(verdict, reordered), "key order is irrelevant")
      const events = (yield* approvalRecords(audit)).map((record) => [record.event, record.granted, record.via])
      assert.deepStrictEqual(events, [["requested", null, "pending"], ["verdict", true, "scripted"]])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("denied: a Deny answer denies, and the verdict is audited", () =>
    Effect.gen(function*() {
      const { approvals, audit } = yield* makeHarness({ respond: (p) => Option.some(ownerAnswer(p, deny)) })
      const verdict = yield* approvals.request(makeRequest())
      assert.strictEqual(verdict.granted, false)
      assert.strictEqual(verdict.via, "scripted")
      assert.strictEqual(verdict.reason, "denied by cli:alice")
      assert.isFalse(verifyApprovedArgs(verdict, makeRequest().args), "a denied verdict never verifies")
      const last = (yield* approvalRecords(audit)).at(-1)
      assert.strictEqual(last?.event, "verdict")
      assert.strictEqual(last?.granted, false)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("expired: no answer before timeoutMs is a denial via timeout, and a late answer is refused", () =>
    Effect.gen(function*() {
      const { approvals, audit, presented } = yield* makeHarness()
      const fiber = yield* Effect.fork(approvals.request(makeRequest()))
      const pending = yield* presented.next
      yield* TestClock.adjust(TimeoutMs - 1)
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)), "still waiting one millisecond before expiry")
      yield* TestClock.adjust(1)
      const verdict = yield* Fiber.join(fiber)
      assert.deepStrictEqual(
        [verdict.granted, verdict.via, verdict.reason],
        [false, "timeout", "no answer within 300 s"]
      )
      const late = yield* approvals.answer(ownerAnswer(pending, once))
      assert.deepStrictEqual(late, { accepted: false, reason: "expired" })
      const last = (yield* approvalRecords(audit)).at(-1)
      assert.strictEqual(last?.event, "answer_rejected")
      assert.strictEqual(last?.reason, "expired")
      assert.strictEqual(last?.request_id, pending.requestId)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("replayed nonce: the same answer again is refused as already answered and changes nothing", () =>
    Effect.gen(function*() {
      const { approvals, audit, presented } = yield* makeHarness()
      const fiber = yield* Effect.fork(approvals.request(makeRequest()))
      const pending = yield* presented.next
      const [first, second] = yield* Effect.all([
        approvals.answer(ownerAnswer(pending, once)),
        approvals.answer(ownerAnswer(pending, deny))
      ], { concurrency: "unbounded" })
      assert.deepStrictEqual(first, { accepted: true })
      assert.deepStrictEqual(second, { accepted: false, reason: "already_answered" })
      const verdict = yield* Fiber.join(fiber)
      assert.isTrue(verdict.granted, "the first answer decided")
      assert.deepStrictEqual(yield* approvals.answer(ownerAnswer(pending, once)), {
        accepted: false,
        reason: "already_answered"
      })
      const rejected = (yield* approvalRecords(audit)).filter((record) => record.event === "answer_rejected")
      assert.deepStrictEqual(rejected.map((record) => record.reason), ["already_answered", "already_answered"])
      assert.strictEqual((yield* approvalRecords(audit)).filter((record) => record.event === "verdict").length, 1)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("foreign: an answer from another session's owner, even with the right nonce, resumes nothing", () =>
    Effect.gen(function*() {
      const { approvals, audit, presented } = yield* makeHarness()
      const alice = yield* Effect.fork(approvals.request(makeRequest()))
      const alicePending = yield* presented.next
      const bob = yield* Effect.fork(approvals.request(makeRequest({ sessionId: "s_bob", requester: "telegram:42" })))
      const bobPending = yield* presented.next
      const stolen = { ...ownerAnswer(alicePending, once), answerer: "telegram:42" }
      assert.deepStrictEqual(yield* approvals.answer(stolen), { accepted: false, reason: "foreign" })
      const crossed = { ...ownerAnswer(bobPending, once), requestId: alicePending.requestId }
      assert.deepStrictEqual(yield* approvals.answer(crossed), { accepted: false, reason: "foreign" })
      assert.isTrue(Option.isNone(yield* Fiber.poll(alice)), "alice's request still waits")
      const rejected = (yield* approvalRecords(audit)).filter((record) => record.event === "answer_rejected")
      assert.deepStrictEqual(rejected.map((r) => [r.sender, r.reason, r.session_id]), [
        ["telegram:42", "foreign", "s_alice"],
        ["telegram:42", "foreign", "s_alice"]
      ])
      assert.deepStrictEqual(yield* approvals.answer(ownerAnswer(alicePending, deny)), { accepted: true })
      assert.isFalse((yield* Fiber.join(alice)).granted)
      yield* Fiber.interrupt(bob)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("wrong nonce: refused without using up the request; unknown request ids are refused too", () =>
    Effect.gen(function*() {
      const { approvals, audit, presented } = yield* makeHarness()
      const fiber = yield* Effect.fork(approvals.request(makeRequest()))
      const pending = yield* presented.next
      const guessed = { ...ownerAnswer(pending, once), nonce: "0".repeat(32) }
      assert.deepStrictEqual(yield* approvals.answer(guessed), { accepted: false, reason: "nonce_mismatch" })
      assert.deepStrictEqual(yield* approvals.answer({ ...guessed, requestId: "ar_nope" }), {
        accepted: false,
        reason: "unknown"
      })
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
      assert.deepStrictEqual(yield* approvals.answer(ownerAnswer(pending, once)), { accepted: true })
      assert.isTrue((yield* Fiber.join(fiber)).granted)
      const reasons = (yield* approvalRecords(audit)).filter((r) => r.event === "answer_rejected").map((r) => r.reason)
      assert.deepStrictEqual(reasons, ["nonce_mismatch", "unknown"])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("args changed after approval: verifyApprovedArgs refuses them", () =>
    Effect.gen(function*() {
      const { approvals } = yield* makeHarness({ respond: (p) => Option.some(ownerAnswer(p, once)) })
      const request = makeRequest()
      const verdict = yield* approvals.request(request)
      assert.isTrue(verifyApprovedArgs(verdict, request.args))
      assert.isFalse(verifyApprovedArgs(verdict, { path: "notes/todo.md", content: "buy milk; rm -rf ~" }))
      assert.isFalse(verifyApprovedArgs(verdict, { path: "../.audit/approvals.jsonl", content: "buy milk" }))
      assert.isFalse(verifyApprovedArgs(verdict, { path: "notes/todo.md", content: "buy milk", append: true }))
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped(`at most ${MaxPendingPerSession} pending per session: the next is denied at once without asking`, () =>
    Effect.gen(function*() {
      const { approvals, audit, presented } = yield* makeHarness()
      const waiting = yield* Effect.forEach(
        [1, 2, 3, 4, 5],
        (i) => Effect.forkScoped(approvals.request(makeRequest({ traceId: `t_${i}` })))
      )
      const pendings = yield* Effect.forEach(waiting, () => presented.next)
      const sixth = yield* approvals.request(makeRequest({ traceId: "t_6" }))
      assert.deepStrictEqual([sixth.granted, sixth.via, sixth.requestId], [false, "limit", null])
      assert.strictEqual((yield* presented.all).length, 5, "the sixth was never shown")
      const limit = (yield* approvalRecords(audit)).find((record) => record.via === "limit")
      assert.strictEqual(limit?.event, "verdict")
      assert.strictEqual(limit?.trace_id, "t_6")

      const other = yield* Effect.forkScoped(approvals.request(makeRequest({ sessionId: "s_other" })))
      yield* presented.next
      yield* approvals.answer(ownerAnswer(pendings[0]!, once))
      yield* Fiber.join(waiting[0]!)
      const freed = yield* Effect.forkScoped(approvals.request(makeRequest({ traceId: "t_7" })))
      assert.strictEqual((yield* presented.next).request.traceId, "t_7", "an answer frees a slot")
      yield* Fiber.interruptAll([other, freed, ...waiting.slice(1)])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("fail closed: when the request cannot be audited it is denied without asking", () =>
    Effect.gen(function*() {
      const audit = yield* makeAuditLogMemory({ fail: true })
      const { approvals, presented } = yield* makeHarness({ audit, respond: (p) => Option.some(ownerAnswer(p, once)) })
      const verdict = yield* approvals.request(makeRequest())
      assert.strictEqual(verdict.granted, false)
      assert.strictEqual(verdict.via, "audit_failed")
      assert.include(verdict.reason, "no space left on device")
      assert.isNotNull(verdict.requestId)
      assert.deepStrictEqual(yield* presented.all, [])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("fail closed: a grant whose verdict cannot be audited is a denial", () =>
    Effect.gen(function*() {
      const { audit, fail } = yield* makeSwitchableAudit
      const { approvals } = yield* makeHarness({
        audit,
        respond: (p) => {
          fail()
          return Option.some(ownerAnswer(p, { _tag: "ForSession" }))
        }
      })
      const verdict = yield* approvals.request(makeRequest())
      assert.deepStrictEqual([verdict.granted, verdict.via], [false, "audit_failed"])
      const again = yield* approvals.request(makeRequest())
      assert.strictEqual(again.via, "audit_failed", "no session grant was opened")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("an interrupted request is settled as denied, audited, and its answer refused", () =>
    Effect.gen(function*() {
      const { approvals, audit, presented } = yield* makeHarness()
      const fiber = yield* Effect.fork(approvals.request(makeRequest()))
      const pending = yield* presented.next
      yield* Fiber.interrupt(fiber)
      const last = (yield* approvalRecords(audit)).at(-1)
      assert.deepStrictEqual([last?.event, last?.granted, last?.via], ["verdict", false, "interrupted"])
      const late = yield* approvals.answer(ownerAnswer(pending, once))
      assert.deepStrictEqual(late, { accepted: false, reason: "expired" })
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("every request and verdict is an approval record in approvals.jsonl", () =>
    Effect.gen(function*() {
      const { approvals, audit } = yield* makeHarness({
        respond: (p) => Option.some(ownerAnswer(p, { _tag: "ForMinutes", minutes: 10 }))
      })
      const request = makeRequest()
      const verdict = yield* approvals.request(request)
      const records = yield* approvalRecords(audit)
      const common = {
        kind: "approval" as const,
        request_id: verdict.requestId!,
        trace_id: "t_1",
        session_id: "s_alice",
        sender: "cli:alice",
        tool_name: "fs_write",
        effect_class: "fs_write:notes/todo.md",
        args_hash: request.argsHash,
        at: "2026-04-22T14:03:22.000Z"
      }
      assert.deepStrictEqual(records, [
        { ...common, event: "requested", granted: null, via: "pending", reason: "side effects need approval" },
        {
          ...common,
          event: "verdict",
          granted: true,
          via: "scripted",
          reason: "approved by cli:alice until 2026-04-22T14:13:22.000Z (fs_write on notes/todo.md)",
          batch_window_expires_at: "2026-04-22T14:13:22.000Z"
        }
      ])
      assert.deepStrictEqual(records.map(auditFileOf), ["approvals.jsonl", "approvals.jsonl"])
    }).pipe(Effect.provide(NodeContext.layer)))
})
