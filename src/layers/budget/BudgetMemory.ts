import { Clock, Effect, Layer } from "effect"
import { localDay } from "../../domain/Time.js"
import { Budget } from "../../services/Budget.js"
import { MyclawConfig } from "../../services/MyclawConfig.js"
import { budgetService, freshDay, makeBudgetCore } from "./BudgetCore.js"

/** The budget's counters in memory only: for embedding and benchmarks without a workspace's budget.json. */
export const BudgetMemory = Layer.effect(
  Budget,
  Effect.gen(function*() {
    const { config } = yield* MyclawConfig
    const settings = { ...config.budget, usdToEur: config.usdToEur, pricing: config.pricing }
    const now = yield* Clock.currentTimeMillis
    const core = yield* makeBudgetCore(settings, freshDay(localDay(now, settings.timeZone)), () => Effect.void)
    return budgetService(core, (request) => core.setOverride(request.until))
  })
)
