import { Context } from "effect"
import type { Effect } from "effect"
import type { AuditError, BudgetExceeded } from "../domain/Errors.js"

export interface BudgetStatus {
  /** `soft`: Thoughts go to local-fast; `hard`: no LLM call at all until the reset. */
  readonly level: "ok" | "soft" | "hard"
  /** The budget day, `YYYY-MM-DD` in `timeZone`. */
  readonly day: string
  readonly timeZone: string
  /** Settled cost of today's calls. */
  readonly spentEur: number
  /** The maximum cost of the calls in flight. */
  readonly reservedEur: number
  readonly softCapEur: number
  readonly hardCapEur: number
  /** Epoch milliseconds of the next local midnight. */
  readonly resetsAt: number
  /** Until when the owner lifted the hard cap today (epoch milliseconds), or null. */
  readonly overrideUntil: number | null
  /** The soft cap is crossed and the owner has not been told yet today. */
  readonly softNoticePending: boolean
}

/** The most a call can cost, held against the hard cap until the real cost settles it. */
export interface Reservation {
  readonly id: string
  readonly eur: number
}

/** The daily spending caps: reserve before a call, settle after. */
export class Budget extends Context.Tag("myclaw/Budget")<Budget, {
  readonly status: Effect.Effect<BudgetStatus>
  /** `status` handed to `f`, in the same runtime operation as the read (a read's `map` would be two more). */
  readonly statusWith: <A>(f: (status: BudgetStatus) => A) => Effect.Effect<A>
  /**
   * The status at `now` (the caller's clock) when it can be told at once, from a copy of the day the store holds;
   * undefined when it cannot (read `status`). The same status `status` gives at that time, without an operation:
   * a turn reads it before every Thought. A budget that leaves it out is read through `status`.
   */
  readonly statusAt?: ((now: number) => BudgetStatus | undefined) | undefined
  /** Refused when spent + reserved + this call's maximum would pass the hard cap (unless overridden). */
  readonly reserve: (call: {
    readonly model: string
    readonly inputTokens: number
    readonly maxOutputTokens: number
  }) => Effect.Effect<Reservation, BudgetExceeded>
  /** The real cost replaces the reservation (0 for a call that failed without usage). */
  readonly settle: (reservation: Reservation, costUsd: number) => Effect.Effect<void>
  /**
   * The call was cut off (interrupted) before its usage was known: the reservation ends, counted as spent at its
   * maximum, since the provider may have billed it.
   */
  readonly abandon: (reservation: Reservation) => Effect.Effect<void>
  /** The owner was told, in one line, that the soft cap is crossed. */
  readonly softNoticeGiven: Effect.Effect<void>
  /** Lifts the hard cap until `until` today; an audit record, or nothing happens. */
  readonly override: (request: {
    readonly until: number
    readonly reason: string
    readonly sender: string
  }) => Effect.Effect<void, AuditError>
}>() {}
