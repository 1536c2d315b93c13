import { Effect } from "effect"
import { budgetRead } from "../../domain/BudgetReads.js"
import type { BudgetRead } from "../../domain/ExecutionTrace.js"
import type { Budget } from "../../services/Budget.js"

/** The budget as the turn uses it: every status read is appended to `reads`. */
export const recordingReads = (budget: Budget["Type"], reads: Array<BudgetRead>): Budget["Type"] => ({
  ...budget,
  status: Effect.map(budget.status, (status) => {
    reads.push(budgetRead(status))
    return status
  })
})
