// One process spending from a workspace's budget: `node budget-worker.mjs HOME CALLS [HARD_CAP]`. Each call
// reserves 0.01 EUR (its maximum) and settles at 0.007 EUR; prints how many calls were granted and refused.
// CALLS `forever`: calls until killed, printing `R` once a reservation is stored and `S` once it is settled.
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

const [home, calls, hardCap] = [process.argv[2], process.argv[3], Number(process.argv[4] ?? "1")]
const forever = calls === "forever"
const config = Schema.decodeUnknownSync(AppConfig)({
  budget: { softCapEur: hardCap / 2, hardCapEur: hardCap, timeZone: "UTC" },
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
  for (let i = 0; forever || i < Number(calls); i++) {
    const reserved = yield* Effect.either(budget.reserve({ model: "m", inputTokens: 0.01, maxOutputTokens: 0 }))
    if (reserved._tag === "Left") {
      refused++
      continue
    }
    granted++
    if (forever) process.stdout.write("R\n")
    // The call itself: a model answers in seconds; here a few milliseconds, so that the lock is not held back to back.
    if (forever) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
    yield* budget.settle(reserved.right, 0.007)
    if (forever) process.stdout.write("S\n")
  }
  return { granted, refused }
})
Effect.runPromise(program.pipe(Effect.provide(layer), Effect.scoped, Logger.withMinimumLogLevel(LogLevel.None)))
  .then((result) => process.stdout.write(JSON.stringify(result) + "\n"))
