import { budgetRead } from "../../domain/BudgetReads.js"
import type { BudgetRead } from "../../domain/ExecutionTrace.js"
import type { Budget, BudgetStatus } from "../../services/Budget.js"

/** Two recorded reads that say the same, field by field (every field of a read: a test holds them to the schema's). */
export const sameRead = (a: BudgetRead, b: BudgetRead): boolean =>
  a.level === b.level && a.day === b.day && a.time_zone === b.time_zone && a.spent_eur === b.spent_eur &&
  a.reserved_eur === b.reserved_eur && a.soft_cap_eur === b.soft_cap_eur && a.hard_cap_eur === b.hard_cap_eur &&
  a.resets_at === b.resets_at && a.override_until === b.override_until &&
  a.soft_notice_pending === b.soft_notice_pending

type BudgetService = Budget["Type"]

/**
 * The last read recorded of each budget, by any turn: a turn's first read that says the same is recorded as that
 * record too (records are immutable), so the turns open at once, which mostly read the same status, share one.
 */
const lastReads = new WeakMap<BudgetService, BudgetRead>()

/**
 * The budget statuses one turn read, in order. A run of reads that say the same is kept as one record and a count
 * (a turn reads the budget before every Thought, and an open conversation would hold an array of the same record).
 */
export class BudgetReadLog {
  private last: BudgetRead | undefined = undefined
  private repeats = 0
  private before: Array<BudgetRead> | undefined = undefined

  /** The last read, if any. */
  get latest(): BudgetRead | undefined {
    return this.last
  }

  push(read: BudgetRead): void {
    if (read === this.last) {
      this.repeats += 1
      return
    }
    if (this.last !== undefined) {
      const before = this.before ??= []
      for (let i = 0; i < this.repeats; i++) before.push(this.last)
    }
    this.last = read
    this.repeats = 1
  }

  /** Every read, in order. */
  all(): Array<BudgetRead> {
    const reads = this.before === undefined ? [] : this.before.slice()
    for (let i = 0; i < this.repeats; i++) reads.push(this.last!)
    return reads
  }
}

/**
 * The budget as the turn uses it: every status read is appended to `reads`, in the read's own runtime operation (or
 * where it is told at once): the turn reads the budget before every Thought. A read that says what the one before
 * said is recorded as that same (immutable) record: a turn reads the budget twice per Thought, and it rarely
 * changes, so a parked conversation keeps one record instead of twenty, shared with the other turns.
 *
 * Its methods are on its prototype and `status` is made when it is read: closures made per turn, or the status
 * effect made up front, would be held by every open conversation for the whole turn (a turn whose budget is told
 * at once reads `status` only as it ends). Only the turn uses it, always as `budget.member`.
 */
class RecordingBudget implements BudgetService {
  constructor(private readonly budget: BudgetService, private readonly reads: BudgetReadLog) {}

  private record(status: BudgetStatus): BudgetStatus {
    const read = budgetRead(status)
    const last = this.reads.latest ?? lastReads.get(this.budget)
    const kept = last !== undefined && sameRead(last, read) ? last : read
    // A new record only: a read that repeats the last one changes nothing to remember.
    if (kept !== last) lastReads.set(this.budget, kept)
    this.reads.push(kept)
    return status
  }

  get status() {
    return this.budget.statusWith((status) => this.record(status))
  }

  statusWith<A>(f: (status: BudgetStatus) => A) {
    return this.budget.statusWith((status) => f(this.record(status)))
  }

  /** Undefined, as the budget's own would be, when the budget cannot tell the status at once. */
  statusAt(now: number): BudgetStatus | undefined {
    const status = this.budget.statusAt?.(now)
    return status === undefined ? undefined : this.record(status)
  }

  reserve(call: Parameters<BudgetService["reserve"]>[0]) {
    return this.budget.reserve(call)
  }

  settle(...args: Parameters<BudgetService["settle"]>) {
    return this.budget.settle(...args)
  }

  abandon(reservation: Parameters<BudgetService["abandon"]>[0]) {
    return this.budget.abandon(reservation)
  }

  get softNoticeGiven() {
    return this.budget.softNoticeGiven
  }

  override(request: Parameters<BudgetService["override"]>[0]) {
    return this.budget.override(request)
  }
}

export const recordingReads = (budget: BudgetService, reads: BudgetReadLog): BudgetService =>
  new RecordingBudget(budget, reads)
