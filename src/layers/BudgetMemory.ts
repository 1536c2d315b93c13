import { Clock, Effect, Layer } from "effect"
import { Budget, type BudgetStatus } from "../services/Budget.js"
import { MyclawConfig } from "../services/MyclawConfig.js"

const localDay = (millis: number): string => {
  const date = new Date(millis)
  return `${date.getFullYear()}-${date.getMonth() + 1}-${date.getDate()}`
}

/** Daily counters in memory, reset at local midnight; durable counters come with the budget file. */
export const BudgetMemory = Layer.effect(
  Budget,
  Effect.gen(function*() {
    const { config } = yield* MyclawConfig
    const { hardCapEur, softCapEur } = config.budget
    let day = localDay(yield* Clock.currentTimeMillis)
    let spentUsd = 0
    const rollover = (millis: number) => {
      const today = localDay(millis)
      if (today !== day) {
        day = today
        spentUsd = 0
      }
    }
    const status = Effect.map(Clock.currentTimeMillis, (millis): BudgetStatus => {
      rollover(millis)
      const spentEur = spentUsd * config.usdToEur
      const level = spentEur >= hardCapEur ? "hard" : spentEur >= softCapEur ? "soft" : "ok"
      return { level, spentEur, softCapEur, hardCapEur }
    })
    const record = (costUsd: number) =>
      Effect.map(Clock.currentTimeMillis, (millis) => {
        rollover(millis)
        spentUsd += costUsd
      })
    return Budget.of({ status, record })
  })
)
