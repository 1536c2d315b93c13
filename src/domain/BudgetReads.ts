import type { BudgetStatus } from "../services/Budget.js"
import type { BudgetRead } from "./ExecutionTrace.js"

/** A budget status as a trace records it. */
export const budgetRead = (status: BudgetStatus): BudgetRead => ({
  level: status.level,
  day: status.day,
  time_zone: status.timeZone,
  spent_eur: status.spentEur,
  reserved_eur: status.reservedEur,
  soft_cap_eur: status.softCapEur,
  hard_cap_eur: status.hardCapEur,
  resets_at: status.resetsAt,
  override_until: status.overrideUntil,
  soft_notice_pending: status.softNoticePending
})

/** The status a recorded read gives back. */
export const budgetStatusOf = (read: BudgetRead): BudgetStatus => ({
  level: read.level,
  day: read.day,
  timeZone: read.time_zone,
  spentEur: read.spent_eur,
  reservedEur: read.reserved_eur,
  softCapEur: read.soft_cap_eur,
  hardCapEur: read.hard_cap_eur,
  resetsAt: read.resets_at,
  overrideUntil: read.override_until,
  softNoticePending: read.soft_notice_pending
})
