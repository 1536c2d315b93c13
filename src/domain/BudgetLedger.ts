import type { ModelPrice } from "./AppConfig.js"
import { costUsd, priceOf } from "./Pricing.js"

/** The budget's rules as pure functions over its state: the stores (memory, SQLite) only keep that state. */

export interface BudgetSettings {
  readonly softCapEur: number
  readonly hardCapEur: number
  readonly timeZone: string
  readonly usdToEur: number
  readonly pricing: Readonly<Record<string, ModelPrice>>
  /**
   * A reservation older than this was left by a process that stopped mid-call (no call lasts that long): it
   * is counted as spent at its maximum.
   */
  readonly staleAfterMs: number
}

/** One budget day's counters. */
export interface BudgetDay {
  readonly day: string
  readonly spentEur: number
  readonly overrideUntil: number | null
  readonly softNoticeGiven: boolean
}

/** A call in flight: its maximum cost, held against the hard cap until it settles. */
export interface HeldReservation {
  readonly id: string
  readonly eur: number
  /** Epoch milliseconds of the reservation. */
  readonly at: number
}

/** What the budget decides on: today's counters and every call in flight (whatever day it started on). */
export interface BudgetState {
  readonly today: BudgetDay
  readonly reservations: ReadonlyArray<HeldReservation>
}

export const freshDay = (day: string): BudgetDay => ({ day, spentEur: 0, overrideUntil: null, softNoticeGiven: false })

export const reservedEur = (state: BudgetState): number =>
  state.reservations.reduce((total, reservation) => total + reservation.eur, 0)

/** The most a call can cost in EUR: its prompt and its whole output allowance at the model's price (0 unpriced). */
export const worstCaseEur = (
  settings: Pick<BudgetSettings, "pricing" | "usdToEur">,
  call: { readonly model: string; readonly inputTokens: number; readonly maxOutputTokens: number }
): number => {
  const price = priceOf(settings.pricing, call.model)
  if (price === undefined) return 0
  return costUsd(price, {
    input: call.inputTokens,
    output: call.maxOutputTokens,
    cached: 0,
    // The whole prompt written to the cache, when that costs more than plain input.
    cacheWrite: (price.cacheWritePerMTok ?? 0) > price.inputPerMTok ? call.inputTokens : 0
  }) * settings.usdToEur
}

/** The hard cap applies unless the owner lifted it until a later time today. */
export const hardCapActive = (day: BudgetDay, now: number): boolean =>
  day.overrideUntil === null || now >= day.overrideUntil

/**
 * Reservations older than `staleAfterMs` become spent at their maximum: a call that old belongs to a process
 * that stopped, and what it cost is unknown, so the most it could cost is counted.
 */
export const sweepStale = (
  state: BudgetState,
  now: number,
  staleAfterMs: number
): { readonly state: BudgetState; readonly sweptEur: number; readonly swept: number } => {
  const stale = state.reservations.filter((reservation) => now - reservation.at > staleAfterMs)
  if (stale.length === 0) return { state, sweptEur: 0, swept: 0 }
  const sweptEur = stale.reduce((total, reservation) => total + reservation.eur, 0)
  return {
    state: {
      today: { ...state.today, spentEur: state.today.spentEur + sweptEur },
      reservations: state.reservations.filter((reservation) => now - reservation.at <= staleAfterMs)
    },
    sweptEur,
    swept: stale.length
  }
}

export type ReserveDecision =
  | { readonly _tag: "Granted"; readonly state: BudgetState }
  | {
    readonly _tag: "Refused"
    readonly spentEur: number
    readonly reservedEur: number
    readonly callEur: number
    readonly hardCapEur: number
  }

/** A call is granted when spent + reserved + its maximum stays within the hard cap (or the cap is lifted). */
export const decideReserve = (
  settings: Pick<BudgetSettings, "hardCapEur">,
  state: BudgetState,
  reservation: HeldReservation,
  now: number
): ReserveDecision => {
  const reserved = reservedEur(state)
  if (hardCapActive(state.today, now) && state.today.spentEur + reserved + reservation.eur > settings.hardCapEur) {
    return {
      _tag: "Refused",
      spentEur: state.today.spentEur,
      reservedEur: reserved,
      callEur: reservation.eur,
      hardCapEur: settings.hardCapEur
    }
  }
  return { _tag: "Granted", state: { ...state, reservations: [...state.reservations, reservation] } }
}

/**
 * The real cost replaces the reservation. A reservation already swept as stale was counted at its maximum:
 * only what the call cost beyond that is added, so nothing is counted twice and nothing is lost.
 */
export const applySettle = (
  state: BudgetState,
  reservation: { readonly id: string; readonly eur: number },
  eur: number
) => {
  const held = state.reservations.some((r) => r.id === reservation.id)
  const added = held ? eur : Math.max(0, eur - reservation.eur)
  return {
    today: { ...state.today, spentEur: state.today.spentEur + added },
    reservations: held ? state.reservations.filter((r) => r.id !== reservation.id) : state.reservations
  } satisfies BudgetState
}
