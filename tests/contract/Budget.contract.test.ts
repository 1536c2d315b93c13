import { NodeContext } from "@effect/platform-node"
import { Layer } from "effect"
import { AuditLogMemory } from "../../src/layers/audit/AuditLogMemory.js"
import { BudgetLive } from "../../src/layers/budget/BudgetLive.js"
import { BudgetMemory } from "../../src/layers/budget/BudgetMemory.js"
import { IdGeneratorLive } from "../../src/layers/ids/IdGeneratorLive.js"
import { MyclawConfigFixed } from "../../src/layers/MyclawConfigLive.js"
import { WorkspaceTemp } from "../../src/layers/Test.js"
import { budgetContract } from "./BudgetContract.js"

budgetContract(
  "live (SQLite in a temporary workspace)",
  (config) =>
    BudgetLive.pipe(
      Layer.provide(Layer.mergeAll(
        MyclawConfigFixed(config),
        WorkspaceTemp.pipe(Layer.provide(NodeContext.layer)),
        AuditLogMemory,
        IdGeneratorLive
      ))
    )
)

budgetContract(
  "memory",
  (config) => BudgetMemory.pipe(Layer.provide(Layer.merge(MyclawConfigFixed(config), IdGeneratorLive)))
)
