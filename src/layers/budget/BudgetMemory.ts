import { Effect, Layer } from "effect"
import { Budget } from "../../services/Budget.js"
import { MyclawConfig } from "../../services/MyclawConfig.js"
import { budgetService, makeBudgetCore, makeMemoryStore } from "./BudgetCore.js"
import { budgetSettings } from "./BudgetLive.js"

/** The budget's counters in memory only: for embedding and benchmarks without a workspace's budget store. */
export const BudgetMemory = Layer.effect(
  Budget,
  Effect.gen(function*() {
    const { config } = yield* MyclawConfig
    const core = yield* makeBudgetCore(budgetSettings(config), yield* makeMemoryStore())
    return budgetService(core, (request) => Effect.orDie(core.setOverride(request.until)))
  })
)
