import { DateTime } from "effect"

/** Epoch milliseconds as an ISO 8601 UTC timestamp, the form every record and trace uses. */
export const isoAt = (millis: number): string => new Date(millis).toISOString()

/** `YYYY-MM-DD` of `millis` in `timeZone`. */
export const localDay = (millis: number, timeZone: string): string =>
  DateTime.formatIsoDate(DateTime.unsafeMakeZoned(millis, { timeZone }))

/** `YYYY-MM-DD HH:MM` of `millis` in `timeZone`, for people. */
export const localMinute = (millis: number, timeZone: string): string =>
  new Date(millis).toLocaleString("sv-SE", { timeZone }).slice(0, 16)

/** Epoch milliseconds of the first local midnight after `millis` in `timeZone`. */
export const nextLocalMidnight = (millis: number, timeZone: string): number =>
  DateTime.toEpochMillis(
    DateTime.add(DateTime.startOf(DateTime.unsafeMakeZoned(millis, { timeZone }), "day"), { days: 1 })
  )

/** A real calendar day written `YYYY-MM-DD`. */
export const isCalendarDay = (text: string): boolean =>
  /^\d{4}-\d{2}-\d{2}$/.test(text) && new Date(`${text}T12:00:00Z`).toISOString().slice(0, 10) === text

/** The first and last millisecond of a local day (23 or 25 hours long on DST days). */
export const localDayBounds = (day: string, timeZone: string): { readonly since: number; readonly until: number } => {
  const [year, month, date] = day.split("-").map(Number) as [number, number, number]
  const next = new Date(Date.UTC(year, month - 1, date + 1))
  const start = (y: number, m: number, d: number) =>
    DateTime.toEpochMillis(
      DateTime.unsafeMakeZoned({ year: y, month: m, day: d }, { timeZone, adjustForTimeZone: true })
    )
  return {
    since: start(year, month, date),
    until: start(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate()) - 1
  }
}
