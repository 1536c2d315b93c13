// One process spending from a workspace's budget: `node budget-worker.mjs HOME CALLS`. Each call reserves
// 0.01 EUR (its maximum) and settles at 0.007 EUR; prints how many calls were granted and refused.
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer, Logger, LogLevel, Schema } from "effect"
import { AppConfig } from "../../dist/domain/AppConfig.js"
import { AuditLogMemory } from "../../dist/layers/audit/AuditLogMemory.js"
import { BudgetLive } from "../../dist/layers/budget/BudgetLive.js"
import { IdGeneratorLive } from "../../dist/layers/ids/IdGeneratorLive.js"
import { MyclawConfigFixed } from "../../dist/layers/MyclawConfigLive.js"
import { makeWorkspace } from "../../dist/layers/workspace/WorkspaceLive.js"
import { Budget } from "../../dist/services/Budget.js"
import { Workspace } from "../../dist/services/Workspace.js"

const [home, calls] = [process.argv[2], Number(process.argv[3])]
const config = Schema.decodeUnknownSync(AppConfig)({
  budget: { softCapEur: 0.5, hardCapEur: 1, timeZone: "UTC" },
  usdToEur: 1,
  pricing: { m: { inputPerMTok: 1_000_000, cachedInputPerMTok: 0, outputPerMTok: 0 } }
})
const layer = BudgetLive.pipe(
  Layer.provideMerge(Layer.mergeAll(
    MyclawConfigFixed(config),
    Layer.effect(Workspace, makeWorkspace(home)).pipe(Layer.provide(NodeContext.layer)),
    AuditLogMemory,
    IdGeneratorLive
  ))
)
const program = Effect.gen(function*() {
  const budget = yield* Budget
  let granted = 0
  let refused = 0
  for (let i = 0; i < calls; i++) {
    const reserved = yield* Effect.either(budget.reserve({ model: "m", inputTokens: 0.01, maxOutputTokens: 0 }))
    if (reserved._tag === "Left") {
      refused++
      continue
    }
    granted++
    yield* budget.settle(reserved.right, 0.007)
  }
  return { granted, refused }
})
Effect.runPromise(program.pipe(Effect.provide(layer), Effect.scoped, Logger.withMinimumLogLevel(LogLevel.None)))
  .then((result) => process.stdout.write(JSON.stringify(result) + "\n"))
