import { Cron, Effect, Schedule } from "effect"
import { zoneOf } from "../domain/Time.js"

/** The cron of every day at `HH:MM` in `timeZone`. */
export const dailyCron = (at: string, timeZone: string) => {
  const [hours, minutes] = at.split(":").map(Number) as [number, number]
  return Cron.unsafeParse(`${minutes} ${hours} * * *`, zoneOf(timeZone))
}

/** Every day at `HH:MM` in `timeZone` (daylight saving included). */
export const dailyAt = (at: string, timeZone: string) => Schedule.cron(dailyCron(at, timeZone))

/**
 * Runs `job` every day at `at` (the first time at the next such moment), for as long as the caller's fiber lives.
 * A failure is logged and the next day comes anyway.
 */
export const everyDay = <E, R>(at: string, timeZone: string, what: string, job: Effect.Effect<void, E, R>) =>
  Effect.schedule(
    job.pipe(Effect.catchAllCause((cause) => Effect.logError(`${what} failed`, cause))),
    dailyAt(at, timeZone)
  )
