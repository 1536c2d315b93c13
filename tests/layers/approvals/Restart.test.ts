import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Scope } from "effect"
import * as NodePath from "node:path"
import { AppConfig } from "../../../src/domain/AppConfig.js"
import { ApprovalChannelAlways, ownerAnswer } from "../../../src/layers/approvals/ApprovalChannelScripted.js"
import { ApprovalsSqlite } from "../../../src/layers/approvals/ApprovalsLive.js"
import { ApprovalsStoreSqlite } from "../../../src/layers/approvals/Store.js"
import { makeAuditLogMemory } from "../../../src/layers/audit/AuditLogMemory.js"
import { IdGeneratorLive } from "../../../src/layers/ids/IdGeneratorLive.js"
import { MyclawConfigFixed } from "../../../src/layers/MyclawConfigLive.js"
import { makeWorkspace } from "../../../src/layers/workspace/WorkspaceLive.js"
import { Approvals } from "../../../src/services/Approvals.js"
import { AuditLog } from "../../../src/services/AuditLog.js"
import { Workspace } from "../../../src/services/Workspace.js"
import { approvalRecords, makeHarness, makeRequest, tempFile } from "./Harness.js"

/** The rows as a fresh client sees them once every other client on the file is closed (one client per file). */
const readRows = (file: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ id: string; state: string; via: string | null }>`SELECT id, state, via FROM approval_requests`
  ).pipe(Effect.provide(ApprovalsStoreSqlite(file)))

describe("ApprovalsLive across a restart", () => {
  it.scoped("pending requests are expired and refused, consumed ones stay consumed, grants are gone", () =>
    Effect.gen(function*() {
      const file = yield* tempFile
      const audit = yield* makeAuditLogMemory()

      const firstRun = yield* Scope.make()
      const first = yield* makeHarness({ file, audit, scope: firstRun })
      const answered = yield* Effect.fork(first.approvals.request(makeRequest()))
      const consumed = yield* first.presented.next
      yield* first.approvals.answer(ownerAnswer(consumed, { _tag: "ForSession" }))
      assert.isTrue((yield* Fiber.join(answered)).granted)
      // The second request's fiber is never resumed nor interrupted, as in a crash: only its SQLite row remains.
      yield* Effect.forkDaemon(first.approvals.request(makeRequest({ traceId: "t_2", target: "notes/later.md" })))
      const pending = yield* first.presented.next
      yield* Scope.close(firstRun, Exit.void)

      const secondRun = yield* Scope.make()
      const second = yield* makeHarness({ file, audit, scope: secondRun })
      const restart = (yield* approvalRecords(audit)).filter((record) => record.via === "restart")
      assert.deepStrictEqual(restart.map((r) => [r.event, r.request_id, r.granted, r.trace_id]), [
        ["verdict", pending.requestId, false, "t_2"]
      ])
      assert.deepStrictEqual(yield* second.approvals.answer(ownerAnswer(pending, { _tag: "Once" })), {
        accepted: false,
        reason: "expired"
      })
      assert.deepStrictEqual(yield* second.approvals.answer(ownerAnswer(consumed, { _tag: "Once" })), {
        accepted: false,
        reason: "already_answered"
      })
      const foreign = { ...ownerAnswer(pending, { _tag: "Once" }), answerer: "telegram:42" }
      assert.deepStrictEqual(yield* second.approvals.answer(foreign), { accepted: false, reason: "foreign" })
      const wrong = { ...ownerAnswer(pending, { _tag: "Once" }), nonce: "f".repeat(32) }
      assert.deepStrictEqual(yield* second.approvals.answer(wrong), { accepted: false, reason: "nonce_mismatch" })

      const fresh = yield* Effect.fork(second.approvals.request(makeRequest({ traceId: "t_3" })))
      const asked = yield* second.presented.next
      assert.strictEqual(asked.request.traceId, "t_3", "the session grant of the first run did not survive")
      yield* Fiber.interrupt(fresh)
      yield* Scope.close(secondRun, Exit.void)

      const rows = (yield* readRows(file)).map((row) => [row.id, row.state, row.via])
      assert.sameDeepMembers(rows, [
        [consumed.requestId, "consumed", "scripted"],
        [pending.requestId, "expired", "restart"],
        [asked.requestId, "consumed", "interrupted"]
      ])

      yield* makeHarness({ file, audit })
      const restarts = (yield* approvalRecords(audit)).filter((record) => record.via === "restart")
      assert.strictEqual(restarts.length, 1, "a third run finds nothing left to expire")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("ApprovalsSqlite keeps its database at <workspace>/.state/approvals.sqlite", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const home = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-approvals-home-" })
      const workspace = yield* makeWorkspace(home)
      const context = yield* Layer.build(ApprovalsSqlite.pipe(
        Layer.provide(ApprovalChannelAlways({ _tag: "Once" })),
        Layer.provide(Layer.effect(AuditLog, makeAuditLogMemory())),
        Layer.provide(IdGeneratorLive),
        Layer.provide(MyclawConfigFixed(AppConfig.make({}))),
        Layer.provide(Layer.succeed(Workspace, workspace))
      ))
      const verdict = yield* Effect.flatMap(Approvals, (approvals) => approvals.request(makeRequest())).pipe(
        Effect.provide(context)
      )
      assert.isTrue(verdict.granted)
      assert.isTrue(yield* fs.exists(NodePath.join(workspace.root, ".state", "approvals.sqlite")))
    }).pipe(Effect.provide(NodeContext.layer)))
})
