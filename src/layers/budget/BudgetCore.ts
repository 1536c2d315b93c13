import { Clock, Effect, Either, identity, SynchronizedRef } from "effect"
import {
  applySettle,
  type BudgetDay,
  type BudgetSettings,
  type BudgetState,
  decideReserve,
  freshDay,
  hardCapActive,
  reservedEur,
  sweepStale,
  worstCaseEur
} from "../../domain/BudgetLedger.js"
import { BudgetExceeded, type BudgetStoreError } from "../../domain/Errors.js"
import { localDay, nextLocalMidnight } from "../../domain/Time.js"
import { Budget, type BudgetStatus, type Reservation } from "../../services/Budget.js"
import { IdGenerator } from "../../services/IdGenerator.js"

/**
 * Where the budget's state lives. `update` runs `f` on the current state while no other writer (fiber or
 * process) can change it, and stores what `f` returns (`null`: nothing changed, nothing written).
 */
export interface BudgetStore {
  /** The state of `day`, read at `at` (epoch milliseconds: how old a copy the store keeps may be). */
  readonly read: (day: string, at: number) => Effect.Effect<BudgetState, BudgetStoreError>
  /**
   * What `read` would give at once, with no effect, when the store holds a copy of `day` fresh enough at `at`;
   * undefined otherwise (then `read`). Every model call reads the budget twice: most reads are this one.
   */
  readonly peek?: (day: string, at: number) => BudgetState | undefined
  readonly update: <A, E>(
    day: string,
    f: (state: BudgetState) => Effect.Effect<readonly [A, BudgetState | null], E>
  ) => Effect.Effect<A, E | BudgetStoreError>
}

/** The whole state of a store in memory: each day's counters and the calls in flight. */
export interface MemoryBudget {
  readonly days: Readonly<Record<string, BudgetDay>>
  readonly reservations: BudgetState["reservations"]
}

/** A store in one SynchronizedRef: updates are serialised by the ref itself. */
export const makeMemoryStore = (initial: MemoryBudget = { days: {}, reservations: [] }) =>
  Effect.map(SynchronizedRef.make(initial), (ref): BudgetStore => {
    const view = (all: MemoryBudget, day: string): BudgetState => ({
      today: all.days[day] ?? freshDay(day),
      reservations: all.reservations
    })
    return {
      read: (day) => Effect.map(SynchronizedRef.get(ref), (all) => view(all, day)),
      update: (day, f) =>
        SynchronizedRef.modifyEffect(ref, (all) =>
          Effect.map(f(view(all, day)), ([result, next]) =>
            [
              result,
              next === null ? all : { days: { ...all.days, [day]: next.today }, reservations: next.reservations }
            ] as const))
    }
  })

/** The status a person or a turn sees: stale reservations shown as spent, as the next writer will count them. */
const snapshot = (settings: BudgetSettings, stored: BudgetState, now: number, resetsAt: number): BudgetStatus => {
  const state = sweepStale(stored, now, settings.staleAfterMs).state
  const reserved = reservedEur(state)
  const hard = hardCapActive(state.today, now) && state.today.spentEur + reserved >= settings.hardCapEur
  const soft = state.today.spentEur >= settings.softCapEur
  return {
    level: hard ? "hard" : soft ? "soft" : "ok",
    day: state.today.day,
    timeZone: settings.timeZone,
    spentEur: state.today.spentEur,
    reservedEur: reserved,
    softCapEur: settings.softCapEur,
    hardCapEur: settings.hardCapEur,
    resetsAt,
    overrideUntil: state.today.overrideUntil !== null && now < state.today.overrideUntil
      ? state.today.overrideUntil
      : null,
    softNoticePending: soft && !state.today.softNoticeGiven
  }
}

/**
 * The budget over a store. Every change reads, decides and writes under the store's lock, so that sessions
 * reserving at once, in one process or many, never pass the hard cap together; stale reservations are swept
 * by the first change that sees them.
 */
export const makeBudgetCore = (
  settings: BudgetSettings,
  store: BudgetStore,
  /** Names this process in its reservation ids, which stay unique in a store that processes share. */
  owner = ""
) =>
  Effect.gen(function*() {
    const ids = yield* IdGenerator
    // The day seen last and until when it lasts, so that most calls skip the time zone computation.
    let bounds = { from: 0, end: 0, day: "" }
    const dayAt = (now: number) => {
      if (now >= bounds.from && now < bounds.end) return bounds.day
      bounds = { from: now, end: nextLocalMidnight(now, settings.timeZone), day: localDay(now, settings.timeZone) }
      return bounds.day
    }
    const change = <A, E>(f: (state: BudgetState, now: number) => Effect.Effect<readonly [A, BudgetState | null], E>) =>
      Effect.clockWith((clock) => {
        const now = clock.unsafeCurrentTimeMillis()
        return store.update(dayAt(now), (stored) => {
          const swept = sweepStale(stored, now, settings.staleAfterMs)
          return Effect.map(
            f(swept.state, now),
            ([result, next]) => [result, next ?? (swept.swept > 0 ? swept.state : null)] as const
          )
        })
      })

    // Read twice per Thought: one clock lookup, and the store is handed the time rather than reading it again;
    // a copy the store holds is used in the same step.
    const statusWith = <A>(f: (status: BudgetStatus) => A) =>
      Effect.clockWith((clock) => {
        const now = clock.unsafeCurrentTimeMillis()
        const day = dayAt(now)
        const view = (stored: BudgetState) => f(snapshot(settings, stored, now, bounds.end))
        const kept = store.peek?.(day, now)
        return kept !== undefined ? Effect.succeed(view(kept)) : Effect.orDie(Effect.map(store.read(day, now), view))
      })
    const status = statusWith(identity)
    const statusAt = (now: number): BudgetStatus | undefined => {
      const kept = store.peek?.(dayAt(now), now)
      return kept === undefined ? undefined : snapshot(settings, kept, now, bounds.end)
    }

    /** A change that moves money and cannot be stored is said loudly; the caller's work is already done. */
    const logged = (what: string) => (effect: Effect.Effect<void, BudgetStoreError>) =>
      Effect.catchTag(
        effect,
        "BudgetStoreError",
        (error) => Effect.logError(`budget: ${what} not recorded in ${error.path}: ${error.message}`)
      )

    /** A reservation that cannot be stored (or a state that cannot be read) is no reservation: no call is made. */
    const dieOnStoreError = <A>(effect: Effect.Effect<A, BudgetExceeded | BudgetStoreError>) =>
      Effect.catchTag(effect, "BudgetStoreError", (error) => Effect.die(error))

    // One chain, no generator: it runs before every model call.
    const reserve = (
      call: { readonly model: string; readonly inputTokens: number; readonly maxOutputTokens: number }
    ) => {
      const eur = worstCaseEur(settings, call)
      const decide = (state: BudgetState, now: number, id: string) => {
        const decision = decideReserve(settings, state, { id, eur, at: now }, now)
        return decision._tag === "Granted" ? Either.right(decision.state) : Either.left(
          new BudgetExceeded({
            spentEur: decision.spentEur,
            reservedEur: decision.reservedEur,
            callEur: decision.callEur,
            hardCapEur: decision.hardCapEur,
            resetsAt: bounds.end,
            model: call.model,
            inputTokens: call.inputTokens,
            maxOutputTokens: call.maxOutputTokens
          })
        )
      }
      // A call that costs nothing moves no money: it is decided on a read, with no write transaction (on the
      // store's copy, when it holds one, in the same step).
      if (eur === 0) {
        return Effect.clockWith((clock) => {
          const now = clock.unsafeCurrentTimeMillis()
          const day = dayAt(now)
          const free = (stored: BudgetState): Effect.Effect<Reservation, BudgetExceeded> =>
            Either.match(decide(sweepStale(stored, now, settings.staleAfterMs).state, now, "free"), {
              onLeft: Effect.fail,
              onRight: () => Effect.succeed<Reservation>({ id: "free", eur })
            })
          const kept = store.peek?.(day, now)
          return kept !== undefined ? free(kept) : dieOnStoreError(Effect.flatMap(store.read(day, now), free))
        })
      }
      return dieOnStoreError(Effect.flatMap(ids.next("reservation"), (drawn) => {
        const id = owner + drawn
        return change((state, now) =>
          Either.match(decide(state, now, id), {
            onLeft: Effect.fail,
            onRight: (next) => Effect.succeed([{ id, eur } satisfies Reservation, next] as const)
          })
        )
      }))
    }

    const settleEur = (reservation: Reservation, eur: number) =>
      reservation.eur === 0 && eur === 0
        ? Effect.void
        : change((state) => Effect.succeed([undefined, applySettle(state, reservation, eur)] as const)).pipe(
          logged(`a call's cost (${eur.toFixed(4)} EUR)`)
        )

    const settle = (reservation: Reservation, cost: number) => settleEur(reservation, cost * settings.usdToEur)

    /** A call cut off before its usage was known: the provider may have billed it, so its maximum is spent. */
    const abandon = (reservation: Reservation) => settleEur(reservation, reservation.eur)

    const softNoticeGiven = change((state) => {
      const next: BudgetState | null = state.today.softNoticeGiven
        ? null
        : { ...state, today: { ...state.today, softNoticeGiven: true } }
      return Effect.succeed([undefined, next] as const)
    }).pipe(logged("the soft cap notice"))

    const setOverride = (until: number) =>
      change((state) => {
        const next: BudgetState = { ...state, today: { ...state.today, overrideUntil: until } }
        return Effect.succeed([undefined, next] as const)
      })

    /** Counts the calls left in flight by stopped processes as spent now; how many there were and their sum. */
    const sweep = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      store.update(dayAt(now), (stored) => {
        const swept = sweepStale(stored, now, settings.staleAfterMs)
        return Effect.succeed(
          [{ count: swept.swept, eur: swept.sweptEur }, swept.swept > 0 ? swept.state : null] as const
        )
      }))

    return { status, statusWith, statusAt, reserve, settle, abandon, softNoticeGiven, setOverride, sweep }
  })

export type BudgetCore = Effect.Effect.Success<ReturnType<typeof makeBudgetCore>>

export const budgetService = (core: BudgetCore, override: Budget["Type"]["override"]) =>
  Budget.of({
    status: core.status,
    statusWith: core.statusWith,
    statusAt: core.statusAt,
    reserve: core.reserve,
    settle: core.settle,
    abandon: core.abandon,
    softNoticeGiven: core.softNoticeGiven,
    override
  })
