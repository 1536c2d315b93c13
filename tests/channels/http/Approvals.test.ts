import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Logger, LogLevel, Option, TestClock } from "effect"
import { type ActionStep, decodeTrace, type ExecutionTrace } from "../../../src/domain/ExecutionTrace.js"
import type { TestOptions } from "../../../src/layers/Test.js"
import { TestLayer } from "../../../src/layers/Test.js"
import { AgentRuntime } from "../../../src/services/AgentRuntime.js"
import { type ApprovalAsker, ApprovalRouter } from "../../../src/services/ApprovalRouter.js"
import type { PendingApproval } from "../../../src/services/Approvals.js"
import { AuditLog } from "../../../src/services/AuditLog.js"
import { Workspace } from "../../../src/services/Workspace.js"
import { probeTools } from "../../contract/fixtures.js"
import { get, Loopback, postJson, serve, ServedGraph, TOKEN } from "../../http/support.js"

const writeScript = [{ toolCalls: [{ name: "fs_write", args: { path: "notes/a.md", content: "hi" } }] }, {
  text: "written"
}]

/** The production routing: no scripted owner; the HTTP approvals API is the answering channel when served. */
const served = (options: TestOptions = {}) =>
  Effect.provide(Layer.merge(ServedGraph({ scriptedOwner: false, script: writeScript, ...options }), Loopback))

interface ListedApproval {
  readonly id: string
  readonly nonce: string
  readonly session_id: string
  readonly channel: string
  readonly tool: string
  readonly target: string
  readonly args: unknown
  readonly expires_at: string
}

const jsonOf = (response: { readonly text: Effect.Effect<string, unknown> }) =>
  Effect.map(Effect.orDie(response.text), (text) => JSON.parse(text) as Record<string, unknown>)

const listed = Effect.flatMap(get("/v1/approvals", TOKEN), jsonOf).pipe(
  Effect.map((json) => json.approvals as ReadonlyArray<ListedApproval>)
)

/** The HTTP turn's request, once it waits for an answer. */
const firstPending = Effect.map(listed.pipe(Effect.repeat({ until: (list) => list.length > 0 })), (list) => list[0]!)

const startHttpTurn = Effect.fork(
  Effect.flatMap(
    postJson("/v1/turns", { message: "write it", session_id: "s-http" }, TOKEN),
    (response) => Effect.flatMap(jsonOf(response), (json) => decodeTrace(json))
  )
)

const actions = (trace: ExecutionTrace) => trace.steps.filter((step): step is ActionStep => step.kind === "action")

const answer = (id: string, body: unknown) => postJson(`/v1/approvals/${id}`, body, TOKEN)

describe("approvals of turns from a channel that cannot ask (the HTTP approvals API)", () => {
  it.scoped("the request is listed with its exact arguments; approving it runs exactly them, audited via http", () =>
    Effect.gen(function*() {
      yield* serve()
      const turn = yield* startHttpTurn
      const pending = yield* firstPending
      assert.deepInclude(pending, {
        session_id: "s-http",
        channel: "http",
        tool: "fs_write",
        target: "notes/a.md",
        args: { path: "notes/a.md", content: "hi" }
      })
      assert.match(pending.nonce, /^[0-9a-f]{32}$/)
      assert.isTrue(Number.isFinite(Date.parse(pending.expires_at)))
      const accepted = yield* answer(pending.id, { nonce: pending.nonce, verdict: "approve" })
      assert.strictEqual(accepted.status, 200)
      const trace = yield* Fiber.join(turn)
      assert.strictEqual(trace.outcome, "success")
      assert.deepStrictEqual(actions(trace)[0]!.approval?.via, "http")
      assert.strictEqual(yield* probeTools.read(yield* Workspace, "notes/a.md"), "hi")
      const verdicts = (yield* (yield* AuditLog).query({ kind: "approval", limit: 10 }))
        .filter((record) => record.kind === "approval" && record.event === "verdict")
      assert.deepStrictEqual(verdicts.map((record) => record.kind === "approval" && [record.granted, record.via]), [[
        true,
        "http"
      ]])
      assert.deepStrictEqual(yield* listed, [], "no longer pending")
    }).pipe(served()))

  it.scoped("denied: the turn ends user_aborted and nothing is written", () =>
    Effect.gen(function*() {
      yield* serve()
      const turn = yield* startHttpTurn
      const pending = yield* firstPending
      assert.strictEqual((yield* answer(pending.id, { nonce: pending.nonce, verdict: "deny" })).status, 200)
      const trace = yield* Fiber.join(turn)
      assert.strictEqual(trace.outcome, "user_aborted")
      assert.isFalse(yield* probeTools.exists(yield* Workspace, "notes/a.md"))
    }).pipe(served()))

  it.scoped("a wrong nonce, a missing or wrong token, change nothing; after the answer a second one is refused", () =>
    Effect.gen(function*() {
      yield* serve()
      const turn = yield* startHttpTurn
      const pending = yield* firstPending
      const wrongNonce = yield* answer(pending.id, { nonce: "0".repeat(32), verdict: "approve" })
      assert.strictEqual(wrongNonce.status, 409)
      assert.strictEqual((yield* jsonOf(wrongNonce)).error, "nonce_mismatch")
      for (const token of [undefined, "wrong"]) {
        const refused = yield* postJson(
          `/v1/approvals/${pending.id}`,
          { nonce: pending.nonce, verdict: "approve" },
          token
        )
        assert.strictEqual(refused.status, 401)
      }
      assert.strictEqual((yield* answer("ar_unknown", { nonce: pending.nonce, verdict: "approve" })).status, 404)
      const malformed = yield* answer(pending.id, { nonce: pending.nonce, verdict: "yes please" })
      assert.strictEqual(malformed.status, 400)
      assert.deepStrictEqual((yield* listed).map((item) => item.id), [pending.id], "still pending, unanswered")
      assert.isFalse(yield* probeTools.exists(yield* Workspace, "notes/a.md"))
      const notJson = yield* postJson(`/v1/approvals/${pending.id}`, "{\"nonce\": ", TOKEN)
      assert.strictEqual(notJson.status, 400)
      assert.include((yield* jsonOf(notJson)).message, "not valid JSON")

      // A UTF-8 byte order mark before the JSON (some clients write one) is not part of it.
      const denied = yield* postJson(
        `/v1/approvals/${pending.id}`,
        `\uFEFF${JSON.stringify({ nonce: pending.nonce, verdict: "deny" })}`,
        TOKEN
      )
      assert.strictEqual(denied.status, 200)
      const trace = yield* Fiber.join(turn)
      assert.strictEqual(trace.outcome, "user_aborted")
      const twice = yield* answer(pending.id, { nonce: pending.nonce, verdict: "approve" })
      assert.strictEqual(twice.status, 409)
      assert.strictEqual((yield* jsonOf(twice)).error, "already_answered")
      assert.isFalse(yield* probeTools.exists(yield* Workspace, "notes/a.md"))
    }).pipe(served()))

  it.scoped("unanswered until expiry: user_aborted; an answer after it is refused and runs nothing", () =>
    Effect.gen(function*() {
      yield* serve()
      const turn = yield* startHttpTurn
      const pending = yield* firstPending
      yield* TestClock.adjust("5 minutes")
      const trace = yield* Fiber.join(turn)
      assert.strictEqual(trace.outcome, "user_aborted")
      assert.strictEqual(actions(trace)[0]!.approval?.via, "timeout")
      const late = yield* answer(pending.id, { nonce: pending.nonce, verdict: "approve" })
      assert.strictEqual(late.status, 410)
      assert.isFalse(yield* probeTools.exists(yield* Workspace, "notes/a.md"))
    }).pipe(served()))
})

describe("approvals routed by the turn's channel", () => {
  /** An asker standing in for the terminal: it answers at once, and records what it was shown. */
  const recordingAsker = (shown: Array<PendingApproval>): ApprovalAsker => ({
    via: "cli",
    owners: ["cli:me"],
    present: (pending) =>
      Effect.sync(() => {
        shown.push(pending)
        return Option.some({
          requestId: pending.requestId,
          nonce: pending.nonce,
          answerer: "cli:me",
          decision: { _tag: "Once" },
          via: "cli"
        })
      })
  })

  it.scoped("a CLI turn asks on the terminal registered for cli, not on the answering channels", () =>
    Effect.gen(function*() {
      const shown: Array<PendingApproval> = []
      yield* serve()
      yield* (yield* ApprovalRouter).askOn("cli", recordingAsker(shown))
      const trace = yield* Effect.flatMap(
        AgentRuntime,
        (agent) => agent.handle({ userMessage: "write it", sessionId: "s-cli", channel: "cli:me" })
      )
      assert.strictEqual(trace.outcome, "success")
      assert.deepStrictEqual(shown.map((pending) => pending.request.channel), ["cli:me"])
      assert.strictEqual(actions(trace)[0]!.approval?.via, "cli")
    }).pipe(served()))

  it.scoped("with no answering channel at all, a turn that cannot ask is denied at once, saying why", () =>
    Effect.gen(function*() {
      const trace = yield* Effect.flatMap(
        AgentRuntime,
        (agent) => agent.handle({ userMessage: "write it", sessionId: "s", channel: "http" })
      )
      assert.strictEqual(trace.outcome, "user_aborted")
      const approval = actions(trace)[0]!.approval!
      assert.strictEqual(approval.via, "no_channel")
      assert.include(approval.reason, "MYCLAW_ADMIN_TOKEN")
      assert.include(trace.final_response!, "nobody can answer here")
    }).pipe(
      Effect.provide(TestLayer({ scriptedOwner: false, script: writeScript })),
      Logger.withMinimumLogLevel(LogLevel.None)
    ))
})
