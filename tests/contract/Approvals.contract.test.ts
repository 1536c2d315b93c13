import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer, Option, Schema } from "effect"
import * as NodePath from "node:path"
import { AppConfig } from "../../src/domain/AppConfig.js"
import { ApprovalChannelScripted, ownerAnswer } from "../../src/layers/approvals/ApprovalChannelScripted.js"
import { ApprovalsLive } from "../../src/layers/approvals/ApprovalsLive.js"
import { ApprovalsScripted } from "../../src/layers/approvals/ApprovalsScripted.js"
import { ApprovalsStoreSqlite } from "../../src/layers/approvals/Store.js"
import { AuditLogMemory } from "../../src/layers/audit/AuditLogMemory.js"
import { IdGeneratorSequential } from "../../src/layers/ids/IdGeneratorSequential.js"
import { MyclawConfigFixed } from "../../src/layers/MyclawConfigLive.js"
import { approvalsContract } from "./ApprovalsContract.js"

approvalsContract(
  "live, on SQLite in a fresh temp folder, a scripted channel",
  (owner, timeoutMs) =>
    ApprovalsLive.pipe(
      Layer.provide(
        ApprovalChannelScripted((pending) =>
          Option.map(Option.fromNullable(owner(pending.request)), (decision) => ownerAnswer(pending, decision))
        )
      ),
      Layer.provide(Layer.unwrapScoped(Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-approvals-contract-" })
        return ApprovalsStoreSqlite(NodePath.join(dir, ".state", "approvals.sqlite"))
      }))),
      Layer.provide(AuditLogMemory),
      Layer.provide(IdGeneratorSequential),
      Layer.provide(MyclawConfigFixed(Schema.decodeUnknownSync(AppConfig)({ approvals: { timeoutMs } }))),
      Layer.provide(NodeContext.layer)
    )
)

approvalsContract("scripted, in memory", (owner, timeoutMs) => ApprovalsScripted(owner, { timeoutMs }))
