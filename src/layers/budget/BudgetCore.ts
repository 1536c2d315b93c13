import { Clock, DateTime, Effect } from "effect"
import type { ModelPrice } from "../../domain/AppConfig.js"
import { BudgetExceeded } from "../../domain/Errors.js"
import { costUsd, priceOf } from "../../domain/Pricing.js"
import { localDay, nextLocalMidnight } from "../../domain/Time.js"
import { Budget, type BudgetStatus, type Reservation } from "../../services/Budget.js"
import { IdGenerator } from "../../services/IdGenerator.js"

/** What budget.json holds: the day's counters, not a log. */
export interface BudgetState {
  readonly day: string
  readonly spentEur: number
  /** Calls in flight: their maximum cost, durable so that a crash never under-counts. */
  readonly reservations: Readonly<Record<string, number>>
  readonly overrideUntil: number | null
  readonly softNoticeGiven: boolean
}

export interface BudgetSettings {
  readonly softCapEur: number
  readonly hardCapEur: number
  readonly timeZone: string
  readonly usdToEur: number
  readonly pricing: Readonly<Record<string, ModelPrice>>
}

export const freshDay = (day: string): BudgetState => ({
  day,
  spentEur: 0,
  reservations: {},
  overrideUntil: null,
  softNoticeGiven: false
})

const sum = (reservations: Readonly<Record<string, number>>) =>
  Object.values(reservations).reduce((total, eur) => total + eur, 0)

/**
 * The budget over a state and a way to save it. Every change happens under one lock, so that many sessions
 * reserving at once never pass the hard cap together; a change that moves no money is not saved.
 */
export const makeBudgetCore = (
  settings: BudgetSettings,
  initial: BudgetState,
  save: (state: BudgetState) => Effect.Effect<void>
) =>
  Effect.gen(function*() {
    const lock = yield* Effect.makeSemaphore(1)
    const ids = yield* IdGenerator
    let state = initial
    // The current day's bounds, so that the per-call check is two comparisons, not a time zone computation.
    let bounds = { start: 0, end: 0 }
    const rollover = (now: number) => {
      if (now >= bounds.start && now < bounds.end) return
      const end = nextLocalMidnight(now, settings.timeZone)
      bounds = {
        start: DateTime.toEpochMillis(
          DateTime.subtract(DateTime.unsafeMakeZoned(end, { timeZone: settings.timeZone }), { days: 1 })
        ),
        end
      }
      const today = localDay(now, settings.timeZone)
      if (today !== state.day) state = { ...freshDay(today), reservations: state.reservations }
    }
    const hardCapActive = (now: number) => state.overrideUntil === null || now >= state.overrideUntil

    const snapshot = (now: number): BudgetStatus => {
      const reservedEur = sum(state.reservations)
      const hard = hardCapActive(now) && state.spentEur + reservedEur >= settings.hardCapEur
      const soft = state.spentEur >= settings.softCapEur
      return {
        level: hard ? "hard" : soft ? "soft" : "ok",
        day: state.day,
        timeZone: settings.timeZone,
        spentEur: state.spentEur,
        reservedEur,
        softCapEur: settings.softCapEur,
        hardCapEur: settings.hardCapEur,
        resetsAt: bounds.end,
        overrideUntil: state.overrideUntil !== null && now < state.overrideUntil ? state.overrideUntil : null,
        softNoticePending: soft && !state.softNoticeGiven
      }
    }

    const locked = <A, E>(f: (now: number) => Effect.Effect<A, E>) =>
      lock.withPermits(1)(Effect.flatMap(Clock.currentTimeMillis, (now) => {
        rollover(now)
        return f(now)
      }))

    const status = Effect.map(Clock.currentTimeMillis, (now) => {
      rollover(now)
      return snapshot(now)
    })

    const reserve = (
      call: { readonly model: string; readonly inputTokens: number; readonly maxOutputTokens: number }
    ) =>
      locked((now) => {
        const price = priceOf(settings.pricing, call.model)
        const eur = price === undefined
          ? 0
          : costUsd(price, {
            input: call.inputTokens,
            output: call.maxOutputTokens,
            cached: 0,
            // The worst case: the whole prompt written to the cache, when that costs more than plain input.
            cacheWrite: (price.cacheWritePerMTok ?? 0) > price.inputPerMTok ? call.inputTokens : 0
          }) * settings.usdToEur
        const reservedEur = sum(state.reservations)
        if (hardCapActive(now) && state.spentEur + reservedEur + eur > settings.hardCapEur) {
          return Effect.fail(
            new BudgetExceeded({
              spentEur: state.spentEur,
              reservedEur,
              callEur: eur,
              hardCapEur: settings.hardCapEur,
              resetsAt: nextLocalMidnight(now, settings.timeZone)
            })
          )
        }
        if (eur === 0) return Effect.succeed<Reservation>({ id: "free", eur })
        return Effect.flatMap(ids.next("reservation"), (id) => {
          state = { ...state, reservations: { ...state.reservations, [id]: eur } }
          return Effect.as(save(state), { id, eur })
        })
      })

    const settle = (reservation: Reservation, cost: number) =>
      locked(() => {
        const eur = cost * settings.usdToEur
        if (reservation.eur === 0 && eur === 0) return Effect.void
        const { [reservation.id]: _settled, ...rest } = state.reservations
        state = { ...state, spentEur: state.spentEur + eur, reservations: rest }
        return save(state)
      })

    const softNoticeGiven = locked(() => {
      if (state.softNoticeGiven) return Effect.void
      state = { ...state, softNoticeGiven: true }
      return save(state)
    })

    const setOverride = (until: number) =>
      locked(() => {
        state = { ...state, overrideUntil: until }
        return save(state)
      })

    return { status, reserve, settle, softNoticeGiven, setOverride, current: () => state }
  })

export type BudgetCore = Effect.Effect.Success<ReturnType<typeof makeBudgetCore>>

export const budgetService = (core: BudgetCore, override: Budget["Type"]["override"]) =>
  Budget.of({
    status: core.status,
    reserve: core.reserve,
    settle: core.settle,
    softNoticeGiven: core.softNoticeGiven,
    override
  })
