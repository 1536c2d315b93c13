import { budgetRead } from "../../domain/BudgetReads.js"
import type { BudgetRead } from "../../domain/ExecutionTrace.js"
import type { Budget, BudgetStatus } from "../../services/Budget.js"

/** Two recorded reads that say the same, field by field. */
const same = (a: BudgetRead, b: BudgetRead): boolean =>
  (Object.keys(a) as Array<keyof BudgetRead>).every((key) => a[key] === b[key])

/**
 * The budget as the turn uses it: every status read is appended to `reads`. A read that says what the one before
 * said is recorded as that same (immutable) record: a turn reads the budget twice per Thought, and it rarely
 * changes, so a parked conversation keeps one record instead of twenty.
 */
export const recordingReads = (budget: Budget["Type"], reads: Array<BudgetRead>): Budget["Type"] => {
  const record = (status: BudgetStatus): BudgetStatus => {
    const read = budgetRead(status)
    const last = reads.at(-1)
    reads.push(last !== undefined && same(last, read) ? last : read)
    return status
  }
  // Recorded in the read's own runtime operation (or where it is told at once): the turn reads the budget before
  // every Thought. `status` is made when it is asked for: made here, it would be held for the whole turn (its
  // effect is a few hundred bytes), and a turn whose budget is told at once reads it only as it ends.
  const statusAt = budget.statusAt
  return {
    ...budget,
    get status() {
      return budget.statusWith(record)
    },
    statusWith: (f) => budget.statusWith((status) => f(record(status))),
    statusAt: statusAt === undefined ? undefined : (now) => {
      const status = statusAt(now)
      return status === undefined ? undefined : record(status)
    }
  }
}
