import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, type Layer, Option, TestClock } from "effect"
import { argsHash, verifyApprovedArgs } from "../../src/domain/ArgsHash.js"
import {
  type ApprovalAnswer,
  type ApprovalDecision,
  type ApprovalRequest,
  Approvals,
  type PendingApproval
} from "../../src/services/Approvals.js"

/**
 * The owner, as a test scripts them: a decision given at once when asked, or undefined to answer later
 * through `Approvals.answer` (or never, and the request expires).
 */
export type ContractOwner = (request: ApprovalRequest) => ApprovalDecision | undefined

export const START = Date.parse("2026-04-22T14:03:22.000Z")
export const TIMEOUT_MS = 300_000
/** Requests of one session that may wait for an answer at once; the next is denied without asking. */
export const MAX_PENDING = 5

const once: ApprovalDecision = { _tag: "Once" }
const deny: ApprovalDecision = { _tag: "Deny" }
const forMinutes = (minutes: number, targetGlob?: string): ApprovalDecision => ({
  _tag: "ForMinutes",
  minutes,
  targetGlob
})

export const makeRequest = (overrides: Partial<ApprovalRequest> = {}): ApprovalRequest => {
  const args = overrides.args ?? { path: "notes/todo.md", content: "buy milk" }
  const target = overrides.target ?? "notes/todo.md"
  const tool = overrides.tool ?? "fs_write"
  return {
    tool,
    summary: `write to ${target}`,
    target,
    effectClass: `${tool}:${target}`,
    args,
    argsHash: argsHash(args),
    reason: "side effects need approval",
    sessionId: "s_alice",
    traceId: "t_1",
    channel: "cli",
    requester: "cli:alice",
    tainted: null,
    ...overrides
  }
}

/** The answer of the request's owner, on the HTTP approvals API. */
const ownerSays = (pending: PendingApproval, decision: ApprovalDecision, overrides: Partial<ApprovalAnswer> = {}) =>
  ({
    requestId: pending.requestId,
    nonce: pending.nonce,
    answerer: pending.request.requester,
    decision,
    via: "http",
    ...overrides
  }) satisfies ApprovalAnswer

/**
 * The Approvals contract: a request is answered once, before its expiry, by its owner holding its nonce; a
 * grant for a window or the session covers the same tool and target in that session; a verdict is bound to
 * the request and its arguments. `make` builds a fresh service whose owner answers as `owner` says and whose
 * requests expire after `timeoutMs`; the clock is set before it is built.
 */
export const approvalsContract = (
  name: string,
  make: (owner: ContractOwner, timeoutMs: number) => Layer.Layer<Approvals, unknown>
) =>
  describe(`Approvals contract: ${name}`, () => {
    /** The service, and how many times the owner was asked. */
    const withApprovals = <A, E, R>(
      owner: ContractOwner,
      f: (approvals: Approvals["Type"], asked: () => ReadonlyArray<ApprovalRequest>) => Effect.Effect<A, E, R>
    ) =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const asked: Array<ApprovalRequest> = []
        const counting: ContractOwner = (request) => (asked.push(request), owner(request))
        return yield* Effect.flatMap(Approvals, (approvals) => f(approvals, () => asked.slice())).pipe(
          Effect.provide(make(counting, TIMEOUT_MS))
        )
      })

    /** Waits (without moving the clock) until `count` requests are pending, and returns them. */
    const pendingCount = (approvals: Approvals["Type"], count: number) =>
      Effect.gen(function*() {
        for (let i = 0; i < 10_000; i++) {
          const pending = yield* approvals.pending
          if (pending.length >= count) return pending
          yield* Effect.yieldNow()
        }
        return assert.fail(`${count} request(s) never became pending`)
      })

    const isRunning = <A, E>(fiber: Fiber.RuntimeFiber<A, E>) =>
      Effect.gen(function*() {
        for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
        return Option.isNone(yield* Fiber.poll(fiber))
      })

    const silent: ContractOwner = () => undefined

    it.scoped("granted at once: the verdict is bound to the request and its arguments", () =>
      withApprovals(() => once, (approvals) =>
        Effect.gen(function*() {
          const request = makeRequest()
          const verdict = yield* approvals.request(request)
          assert.isTrue(verdict.granted)
          assert.strictEqual(verdict.via, "scripted")
          assert.isString(verdict.requestId)
          assert.strictEqual(verdict.argsHash, request.argsHash)
          assert.isTrue(verifyApprovedArgs(verdict, { content: "buy milk", path: "notes/todo.md" }))
          assert.isFalse(verifyApprovedArgs(verdict, { path: "notes/todo.md", content: "sell milk" }))
          assert.deepStrictEqual(yield* approvals.pending, [], "nothing waits once answered")
          const again = yield* approvals.request(request)
          assert.notStrictEqual(again.requestId, verdict.requestId, "every question has its own id")
        })))

    it.scoped("denied at once: not granted, and the arguments never verify", () =>
      withApprovals(() => deny, (approvals) =>
        Effect.gen(function*() {
          const request = makeRequest()
          const verdict = yield* approvals.request(request)
          assert.isFalse(verdict.granted)
          assert.strictEqual(verdict.via, "scripted")
          assert.isString(verdict.requestId)
          assert.isFalse(verifyApprovedArgs(verdict, request.args))
        })))

    it.scoped("answered later: the request waits in pending with its nonce and expiry until the owner answers", () =>
      withApprovals(silent, (approvals) =>
        Effect.gen(function*() {
          const request = makeRequest()
          const fiber = yield* Effect.fork(approvals.request(request))
          const [pending] = yield* pendingCount(approvals, 1)
          assert.deepStrictEqual(pending!.request, request)
          assert.strictEqual(pending!.expiresAt, START + TIMEOUT_MS)
          assert.isAtLeast(pending!.nonce.length, 16)
          assert.isTrue(yield* isRunning(fiber))
          assert.deepStrictEqual(yield* approvals.answer(ownerSays(pending!, once)), { accepted: true })
          const verdict = yield* Fiber.join(fiber)
          assert.isTrue(verdict.granted)
          assert.strictEqual(verdict.via, "http", "the verdict names the channel the owner answered on")
          assert.strictEqual(verdict.requestId, pending!.requestId)
          assert.strictEqual(verdict.argsHash, request.argsHash)
          assert.deepStrictEqual(yield* approvals.pending, [])
        })))

    it.scoped("a deny answered later denies", () =>
      withApprovals(silent, (approvals) =>
        Effect.gen(function*() {
          const fiber = yield* Effect.fork(approvals.request(makeRequest()))
          const [pending] = yield* pendingCount(approvals, 1)
          assert.deepStrictEqual(yield* approvals.answer(ownerSays(pending!, deny)), { accepted: true })
          const verdict = yield* Fiber.join(fiber)
          assert.isFalse(verdict.granted)
          assert.strictEqual(verdict.via, "http")
        })))

    it.scoped("a wrong nonce, or an answer from someone else, is refused and changes nothing", () =>
      withApprovals(silent, (approvals) =>
        Effect.gen(function*() {
          const fiber = yield* Effect.fork(approvals.request(makeRequest()))
          const [pending] = yield* pendingCount(approvals, 1)
          const wrongNonce = ownerSays(pending!, once, { nonce: "0".repeat(pending!.nonce.length) })
          assert.deepStrictEqual(yield* approvals.answer(wrongNonce), { accepted: false, reason: "nonce_mismatch" })
          const foreign = ownerSays(pending!, once, { answerer: "cli:mallory" })
          assert.deepStrictEqual(yield* approvals.answer(foreign), { accepted: false, reason: "foreign" })
          assert.deepStrictEqual(yield* approvals.answer(ownerSays(pending!, once, { nonce: "" })), {
            accepted: false,
            reason: "nonce_mismatch"
          })
          assert.isTrue(yield* isRunning(fiber), "still waiting")
          assert.deepStrictEqual((yield* approvals.pending).map((p) => p.requestId), [pending!.requestId])
          assert.deepStrictEqual(yield* approvals.answer(ownerSays(pending!, deny)), { accepted: true })
          assert.isFalse((yield* Fiber.join(fiber)).granted)
        })))

    it.scoped("an answer counts once: a second one, even a different decision, is refused", () =>
      withApprovals(silent, (approvals) =>
        Effect.gen(function*() {
          const fiber = yield* Effect.fork(approvals.request(makeRequest()))
          const [pending] = yield* pendingCount(approvals, 1)
          assert.deepStrictEqual(yield* approvals.answer(ownerSays(pending!, once)), { accepted: true })
          const verdict = yield* Fiber.join(fiber)
          for (const decision of [once, deny]) {
            assert.deepStrictEqual(yield* approvals.answer(ownerSays(pending!, decision)), {
              accepted: false,
              reason: "already_answered"
            })
          }
          assert.isTrue(verdict.granted)
          assert.deepStrictEqual(
            yield* approvals.answer(ownerSays(pending!, once, { answerer: "cli:mallory" })),
            { accepted: false, reason: "foreign" },
            "an answered request still names no one else its owner"
          )
        })))

    it.scoped("a request answered at once cannot be answered again", () =>
      withApprovals(() => deny, (approvals) =>
        Effect.gen(function*() {
          const verdict = yield* approvals.request(makeRequest())
          const answer: ApprovalAnswer = {
            requestId: verdict.requestId!,
            nonce: "f".repeat(32),
            answerer: "cli:alice",
            decision: once,
            via: "http"
          }
          const outcome = yield* approvals.answer(answer)
          assert.isFalse(outcome.accepted)
          assert.notStrictEqual(outcome.accepted === false && outcome.reason, "unknown", "the request is known")
        })))

    it.scoped("expiry: no answer before it is a denial via timeout; a late answer is refused as expired", () =>
      withApprovals(silent, (approvals) =>
        Effect.gen(function*() {
          const request = makeRequest()
          const fiber = yield* Effect.fork(approvals.request(request))
          const [pending] = yield* pendingCount(approvals, 1)
          yield* TestClock.adjust(TIMEOUT_MS - 1)
          assert.isTrue(yield* isRunning(fiber), "still waiting a millisecond before expiry")
          yield* TestClock.adjust(1)
          const verdict = yield* Fiber.join(fiber)
          assert.isFalse(verdict.granted)
          assert.strictEqual(verdict.via, "timeout")
          assert.strictEqual(verdict.requestId, pending!.requestId)
          assert.deepStrictEqual(yield* approvals.pending, [])
          assert.deepStrictEqual(yield* approvals.answer(ownerSays(pending!, once)), {
            accepted: false,
            reason: "expired"
          })
        })))

    it.scoped("an unknown request id is refused as unknown", () =>
      withApprovals(silent, (approvals) =>
        Effect.gen(function*() {
          const outcome = yield* approvals.answer({
            requestId: "ar_nobody",
            nonce: "0".repeat(32),
            answerer: "cli:alice",
            decision: once,
            via: "http"
          })
          assert.deepStrictEqual(outcome, { accepted: false, reason: "unknown" })
        })))

    it.scoped("pending lists every waiting request, oldest first, and forgets each once settled", () =>
      withApprovals(silent, (approvals) =>
        Effect.gen(function*() {
          const first = yield* Effect.fork(approvals.request(makeRequest({ traceId: "t_1" })))
          yield* pendingCount(approvals, 1)
          yield* TestClock.adjust("1 minute")
          const second = yield* Effect.fork(
            approvals.request(makeRequest({ traceId: "t_2", sessionId: "s_bob", requester: "cli:bob" }))
          )
          const pending = yield* pendingCount(approvals, 2)
          assert.deepStrictEqual(pending.map((p) => p.request.traceId), ["t_1", "t_2"])
          assert.deepStrictEqual(pending.map((p) => p.expiresAt), [START + TIMEOUT_MS, START + 60_000 + TIMEOUT_MS])
          assert.notStrictEqual(pending[0]!.nonce, pending[1]!.nonce)
          assert.notStrictEqual(pending[0]!.requestId, pending[1]!.requestId)
          assert.deepStrictEqual(
            yield* approvals.answer(ownerSays(pending[0]!, once, { answerer: "cli:bob", nonce: pending[1]!.nonce })),
            { accepted: false, reason: "foreign" },
            "one owner's nonce opens nothing of another's"
          )
          yield* approvals.answer(ownerSays(pending[1]!, deny))
          assert.isFalse((yield* Fiber.join(second)).granted)
          assert.deepStrictEqual((yield* approvals.pending).map((p) => p.request.traceId), ["t_1"])
          yield* approvals.answer(ownerSays(pending[0]!, once))
          assert.isTrue((yield* Fiber.join(first)).granted)
        })))

    it.scoped("an interrupted request stops waiting, and its answer is refused", () =>
      withApprovals(silent, (approvals) =>
        Effect.gen(function*() {
          const fiber = yield* Effect.fork(approvals.request(makeRequest()))
          const [pending] = yield* pendingCount(approvals, 1)
          const exit = yield* Fiber.interrupt(fiber)
          assert.isTrue(Exit.isInterrupted(exit))
          assert.deepStrictEqual(yield* approvals.pending, [])
          const outcome = yield* approvals.answer(ownerSays(pending!, once))
          assert.isFalse(outcome.accepted)
        })))

    it.scoped(`at most ${MAX_PENDING} requests of a session wait at once: the next is denied without asking`, () =>
      withApprovals(silent, (approvals, asked) =>
        Effect.gen(function*() {
          const fibers = yield* Effect.forEach(
            Array.from({ length: MAX_PENDING }, (_, i) => makeRequest({ traceId: `t_${i}` })),
            (request) => Effect.fork(approvals.request(request))
          )
          yield* pendingCount(approvals, MAX_PENDING)
          const refused = yield* approvals.request(makeRequest({ traceId: "t_over" }))
          assert.isFalse(refused.granted)
          assert.strictEqual(refused.via, "limit")
          assert.isNull(refused.requestId, "no question was asked")
          for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
          assert.notInclude(asked().map((request) => request.traceId), "t_over", "the owner was not asked")
          const other = yield* Effect.fork(
            approvals.request(makeRequest({ traceId: "t_bob", sessionId: "s_bob", requester: "cli:bob" }))
          )
          yield* pendingCount(approvals, MAX_PENDING + 1)
          const waiting = yield* approvals.pending
          for (const pending of waiting) yield* approvals.answer(ownerSays(pending, deny))
          yield* Fiber.join(other)
          yield* Effect.forEach(fibers, Fiber.join)
          yield* Effect.fork(approvals.request(makeRequest({ traceId: "t_after" })))
          assert.strictEqual((yield* pendingCount(approvals, 1)).length, 1, "answered requests free their places")
        })))

    it.scoped("a grant for minutes covers the same tool and target in the session, until it ends", () =>
      withApprovals(
        (request) => request.tool === "fs_write" && request.target === "notes/todo.md" ? forMinutes(10) : deny,
        (approvals, asked) =>
          Effect.gen(function*() {
            const first = yield* approvals.request(makeRequest())
            assert.isTrue(first.granted)
            const covered = yield* approvals.request(makeRequest({ traceId: "t_2", args: { path: "notes/todo.md" } }))
            assert.isTrue(covered.granted)
            assert.strictEqual(covered.via, "batch")
            assert.strictEqual(covered.argsHash, argsHash({ path: "notes/todo.md" }), "bound to its own arguments")
            assert.strictEqual(asked().length, 1, "the grant answered without asking")
            assert.isFalse((yield* approvals.request(makeRequest({ target: "notes/other.md" }))).granted)
            assert.isFalse((yield* approvals.request(makeRequest({ tool: "fs_delete" }))).granted)
            const bob = makeRequest({ sessionId: "s_bob", requester: "cli:bob" })
            assert.strictEqual((yield* approvals.request(bob)).via, "scripted", "another session is asked")
            assert.strictEqual(asked().length, 4)
            yield* TestClock.adjust("9 minutes")
            assert.strictEqual((yield* approvals.request(makeRequest())).via, "batch")
            yield* TestClock.adjust("1 minute")
            assert.strictEqual((yield* approvals.request(makeRequest())).via, "scripted", "asked again once it ends")
            assert.strictEqual(asked().length, 5)
          })
      ))

    it.scoped("a session grant with a glob covers matching targets for the rest of the session", () =>
      withApprovals(() => ({ _tag: "ForSession", targetGlob: "notes/*" }), (approvals, asked) =>
        Effect.gen(function*() {
          assert.isTrue((yield* approvals.request(makeRequest())).granted)
          yield* TestClock.adjust("6 hours")
          const later = yield* approvals.request(makeRequest({ target: "notes/later.md" }))
          assert.isTrue(later.granted)
          assert.strictEqual(later.via, "session")
          assert.strictEqual(asked().length, 1)
          assert.strictEqual((yield* approvals.request(makeRequest({ target: "secrets/key" }))).via, "scripted")
          assert.strictEqual(asked().length, 2)
        })))

    it.scoped("a once grant and a deny leave no grant behind", () =>
      withApprovals((request) => request.traceId === "t_deny" ? deny : once, (approvals, asked) =>
        Effect.gen(function*() {
          yield* approvals.request(makeRequest())
          yield* approvals.request(makeRequest())
          yield* approvals.request(makeRequest({ traceId: "t_deny" }))
          yield* approvals.request(makeRequest({ traceId: "t_deny" }))
          assert.strictEqual(asked().length, 4)
        })))

    it.scoped("a tainted request is asked afresh despite a grant", () =>
      withApprovals(() =>
        forMinutes(10), (approvals, asked) =>
        Effect.gen(function*() {
          yield* approvals.request(makeRequest())
          const tainted = yield* approvals.request(makeRequest({ tainted: { sources: ["web_fetch:example.org"] } }))
          assert.strictEqual(tainted.via, "scripted")
          assert.strictEqual(asked().length, 2)
          assert.deepStrictEqual(asked()[1]!.tainted, { sources: ["web_fetch:example.org"] })
        })))

    it.scoped("a grant answered later opens its window from the answer", () =>
      withApprovals(silent, (approvals, asked) =>
        Effect.gen(function*() {
          const fiber = yield* Effect.fork(approvals.request(makeRequest()))
          const [pending] = yield* pendingCount(approvals, 1)
          yield* TestClock.adjust("2 minutes")
          yield* approvals.answer(ownerSays(pending!, forMinutes(5)))
          assert.isTrue((yield* Fiber.join(fiber)).granted)
          yield* TestClock.adjust("4 minutes")
          assert.strictEqual((yield* approvals.request(makeRequest())).via, "batch")
          assert.strictEqual(asked().length, 1)
        })))
  })
