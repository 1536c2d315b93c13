import { Clock, Console, Effect } from "effect"
import * as NodeOs from "node:os"
import { localDay, localInstant, localMinute as local } from "../domain/Time.js"
import { Budget, type BudgetStatus } from "../services/Budget.js"
import { UsageError } from "./Args.js"

const inHours = (from: number, to: number): string => {
  const minutes = Math.max(0, Math.round((to - from) / 60_000))
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`
}

export const renderBudget = (status: BudgetStatus, now: number): string => {
  const remaining = (cap: number) => Math.max(0, cap - status.spentEur - status.reservedEur).toFixed(2)
  return [
    `spent today   ${status.spentEur.toFixed(4)} EUR   (${status.day}, ${status.timeZone})`,
    `in flight     ${status.reservedEur.toFixed(4)} EUR   (reserved by calls not yet settled)`,
    `soft cap      ${status.softCapEur.toFixed(2)} EUR   remaining ${remaining(status.softCapEur)}`,
    `hard cap      ${status.hardCapEur.toFixed(2)} EUR   remaining ${remaining(status.hardCapEur)}`,
    `state         ${
      status.level === "ok"
        ? "ok"
        : status.level === "soft"
        ? "over the soft cap: Thoughts on local-fast"
        : "over the hard cap: no LLM call"
    }`,
    `resets at     ${local(status.resetsAt, status.timeZone)} ${status.timeZone} (in ${inHours(now, status.resetsAt)})`,
    `override      ${
      status.overrideUntil === null ? "none" : `hard cap lifted until ${local(status.overrideUntil, status.timeZone)}`
    }`
  ].join("\n")
}

/** `myclaw budget`: today's spend, both caps, what remains, when it resets. */
export const budgetShow = Effect.gen(function*() {
  const status = yield* (yield* Budget).status
  yield* Console.log(renderBudget(status, yield* Clock.currentTimeMillis))
  return 0
})

/** `myclaw budget override --until HH:MM --reason "..."`: lifts the hard cap until that time today; audited. */
export const budgetOverride = (options: { readonly until: string; readonly reason: string }) =>
  Effect.gen(function*() {
    const budget = yield* Budget
    const status = yield* budget.status
    const now = yield* Clock.currentTimeMillis
    const [hours, minutes] = options.until.split(":").map(Number) as [number, number]
    // The wall-clock time on today's date: not midnight plus a duration, which is an hour off on the days the
    // clocks move, nor the day's start plus one, where the day begins at 01:00.
    const until = localInstant(localDay(now, status.timeZone), hours, minutes, status.timeZone)
    if (until <= now) {
      return yield* new UsageError({
        message: `--until ${options.until} has already passed today (${status.timeZone})`
      })
    }
    let sender = "cli"
    try {
      sender = `cli:${NodeOs.userInfo().username}`
    } catch {
      // no user name: the override is still audited, as "cli"
    }
    yield* budget.override({ until, reason: options.reason, sender })
    yield* Console.log(`hard cap lifted until ${local(until, status.timeZone)} ${status.timeZone} (audited)`)
    yield* Console.log(renderBudget(yield* budget.status, now))
    return 0
  })
