import { Context } from "effect"
import type { Effect } from "effect"

export interface BudgetStatus {
  /** `soft`: Thoughts go to local-fast; `hard`: no LLM call at all. */
  readonly level: "ok" | "soft" | "hard"
  readonly spentEur: number
  readonly softCapEur: number
  readonly hardCapEur: number
}

/** The daily spending caps (DESIGN section 6). */
export class Budget extends Context.Tag("myclaw/Budget")<Budget, {
  readonly status: Effect.Effect<BudgetStatus>
  readonly record: (costUsd: number) => Effect.Effect<void>
}>() {}
