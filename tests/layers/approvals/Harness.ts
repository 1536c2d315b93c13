import { FileSystem } from "@effect/platform"
import { Context, Effect, Layer, Option, Schema, Scope, TestClock } from "effect"
import * as NodePath from "node:path"
import { AppConfig } from "../../../src/domain/AppConfig.js"
import { argsHash } from "../../../src/domain/ArgsHash.js"
import { ApprovalRecord } from "../../../src/domain/AuditRecord.js"
import { AuditError } from "../../../src/domain/Errors.js"
import { ApprovalChannelScripted, PresentedApprovals } from "../../../src/layers/approvals/ApprovalChannelScripted.js"
import { ApprovalsLive } from "../../../src/layers/approvals/ApprovalsLive.js"
import { ApprovalsStoreSqlite } from "../../../src/layers/approvals/Store.js"
import { makeAuditLogMemory } from "../../../src/layers/audit/AuditLogMemory.js"
import { IdGeneratorLive } from "../../../src/layers/ids/IdGeneratorLive.js"
import { MyclawConfigFixed } from "../../../src/layers/MyclawConfigLive.js"
import type { ApprovalAnswer, ApprovalRequest, PendingApproval } from "../../../src/services/Approvals.js"
import { Approvals } from "../../../src/services/Approvals.js"
import { AuditLog } from "../../../src/services/AuditLog.js"

export const Start = Date.parse("2026-04-22T14:03:22.000Z")
export const TimeoutMs = 300_000

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

/** The audit log in memory, with a switch that makes every append fail (a full disk) from then on. */
export const makeSwitchableAudit = Effect.gen(function*() {
  const memory = yield* makeAuditLogMemory()
  let failing = false
  const audit = AuditLog.of({
    ...memory,
    append: (record) =>
      failing
        ? Effect.fail(
          new AuditError({ path: "<memory>", reason: "Io", message: "no space left on device (simulated)" })
        )
        : memory.append(record)
  })
  return { audit, fail: () => void (failing = true) }
})

export interface Harness {
  readonly approvals: Approvals["Type"]
  readonly presented: PresentedApprovals["Type"]
  readonly audit: AuditLog["Type"]
  readonly file: string
}

export interface HarnessOptions {
  readonly respond?: (pending: PendingApproval) => Option.Option<ApprovalAnswer>
  readonly audit?: AuditLog["Type"]
  /** The SQLite file; a new temporary folder when absent. */
  readonly file?: string
  /** Where the layer lives; the test's scope when absent (a second scope, closed early, is a process that ended). */
  readonly scope?: Scope.Scope
}

export const tempFile = Effect.flatMap(
  FileSystem.FileSystem,
  (fs) => fs.makeTempDirectoryScoped({ prefix: "myclaw-approvals-" })
).pipe(Effect.map((dir) => NodePath.join(dir, ".state", "approvals.sqlite")))

/** ApprovalsLive on a real SQLite file, a scripted channel and an audit log in memory; the clock set first. */
export const makeHarness = (options: HarnessOptions = {}) =>
  Effect.gen(function*() {
    if ((yield* TestClock.currentTimeMillis) < Start) yield* TestClock.setTime(Start)
    const file = options.file ?? (yield* tempFile)
    const audit = options.audit ?? (yield* makeAuditLogMemory())
    const layer = ApprovalsLive.pipe(
      Layer.provideMerge(ApprovalChannelScripted(options.respond ?? (() => Option.none()))),
      Layer.provide(ApprovalsStoreSqlite(file)),
      Layer.provide(Layer.succeed(AuditLog, audit)),
      Layer.provide(IdGeneratorLive),
      Layer.provide(MyclawConfigFixed(Schema.decodeUnknownSync(AppConfig)({ approvals: { timeoutMs: TimeoutMs } })))
    )
    const context = options.scope === undefined
      ? yield* Layer.build(layer)
      : yield* Layer.buildWithScope(layer, options.scope)
    return {
      approvals: Context.get(context, Approvals),
      presented: Context.get(context, PresentedApprovals),
      audit,
      file
    } satisfies Harness
  })

/** The approval records, oldest first, checked against the audit record schema. */
export const approvalRecords = (audit: AuditLog["Type"]) =>
  Effect.flatMap(
    audit.query({ kind: "approval", limit: 1_000 }),
    (records) => Effect.forEach(records.slice().reverse(), (record) => Schema.decodeUnknown(ApprovalRecord)(record))
  )
