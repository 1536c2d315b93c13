import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { makeAuditLogFile } from "../../src/layers/audit/AuditLogFile.js"
import { AuditLogMemory } from "../../src/layers/audit/AuditLogMemory.js"
import { AuditLog } from "../../src/services/AuditLog.js"
import { makeDirs } from "../layers/audit/support.js"
import { auditLogContract } from "./AuditLogContract.js"

auditLogContract("memory", () => AuditLogMemory)

for (const fsync of ["always", "batch"] as const) {
  auditLogContract(`file (fsync: ${fsync}), a fresh temp folder per test`, () =>
    Layer.scoped(
      AuditLog,
      Effect.flatMap(makeDirs, (dirs) => makeAuditLogFile({ auditDir: dirs.auditDir, keyDir: dirs.keyDir, fsync }))
    ).pipe(Layer.provide(NodeContext.layer)))
}
