import { DateTime } from "effect"
import * as NodeFs from "node:fs"

const DAY_MS = 86_400_000
const UTC_OFFSET = DateTime.zoneMakeOffset(0)

/**
 * A zone as Effect's DateTime and Cron take it: UTC as a fixed offset, whose arithmetic needs no Intl (Intl's first
 * use loads locale data, tens of ms of a short command's start-up); any other zone by its name.
 */
export const zoneOf = (timeZone: string): DateTime.TimeZone | string => timeZone === "UTC" ? UTC_OFFSET : timeZone

/** Epoch milliseconds as an ISO 8601 UTC timestamp, the form every record and trace uses. */
export const isoAt = (millis: number): string => new Date(millis).toISOString()

/** `YYYY-MM-DD` of `millis` in `timeZone`. */
export const localDay = (millis: number, timeZone: string): string =>
  DateTime.formatIsoDate(DateTime.unsafeMakeZoned(millis, { timeZone: zoneOf(timeZone) }))

/** `YYYY-MM-DD HH:MM` of `millis` in `timeZone`, for people. */
export const localMinute = (millis: number, timeZone: string): string => {
  const iso = isoAt(millis)
  // In UTC, the ISO text itself (when its year has four digits, as the Swedish format writes it).
  return timeZone === "UTC" && iso.length === 24
    ? `${iso.slice(0, 10)} ${iso.slice(11, 16)}`
    : new Date(millis).toLocaleString("sv-SE", { timeZone }).slice(0, 16)
}

/**
 * The instant the local clock of `timeZone` reads `hours:minutes` on `day` (`YYYY-MM-DD`). A time the clocks skip
 * (moved forward) is read as the instant after the skip, and a time they show twice (moved back) as the first.
 */
export const localInstant = (day: string, hours: number, minutes: number, timeZone: string): number => {
  const [year, month, date] = day.split("-").map(Number) as [number, number, number]
  return DateTime.toEpochMillis(
    DateTime.unsafeMakeZoned({ year, month, day: date, hours, minutes }, {
      timeZone: zoneOf(timeZone),
      adjustForTimeZone: true
    })
  )
}

/**
 * The first instant of `day` in `timeZone`: its midnight, or where the clocks skip midnight (Santiago, Havana,
 * Cairo, Beirut, on the day summer time starts) the instant they skip to.
 */
export const localDayStart = (day: string, timeZone: string): number => localInstant(day, 0, 0, timeZone)

/** The calendar day after `day`, both written `YYYY-MM-DD`. */
export const dayAfter = (day: string): string => {
  const [year, month, date] = day.split("-").map(Number) as [number, number, number]
  return new Date(Date.UTC(year, month - 1, date + 1)).toISOString().slice(0, 10)
}

/**
 * Epoch milliseconds of the first local midnight after `millis` in `timeZone`: where the next day begins, counted
 * from the calendar (a day that begins at 01:00 is not followed by one that also does).
 */
export const nextLocalMidnight = (millis: number, timeZone: string): number =>
  localDayStart(dayAfter(localDay(millis, timeZone)), timeZone)

/** A real calendar day written `YYYY-MM-DD`. */
export const isCalendarDay = (text: string): boolean =>
  /^\d{4}-\d{2}-\d{2}$/.test(text) && new Date(`${text}T12:00:00Z`).toISOString().slice(0, 10) === text

/** The first and last millisecond of a local day (23 or 25 hours long on DST days). */
export const localDayBounds = (day: string, timeZone: string): { readonly since: number; readonly until: number } => ({
  since: localDayStart(day, timeZone),
  until: localDayStart(dayAfter(day), timeZone) - 1
})

/** The names Intl resolves to "UTC" (the machine's zone may be set with any of them). */
export const utcZoneNames: ReadonlySet<string> = new Set([
  "UTC",
  "Etc/UTC",
  "Etc/UCT",
  "Etc/Universal",
  "Etc/Zulu",
  "UCT",
  "Universal",
  "Zulu",
  "Etc/GMT",
  "Etc/GMT0",
  "Etc/GMT+0",
  "Etc/GMT-0",
  "GMT",
  "GMT0",
  "GMT+0",
  "GMT-0",
  "Etc/Greenwich",
  "Greenwich"
])

/**
 * What the machine declares as its zone, where the time zone library reads it: the TZ variable (without POSIX's
 * leading ':'), else the name the /etc/localtime link points to under a `zoneinfo` folder; undefined when neither
 * says (no link, a copied file, another system).
 */
export const declaredZone = (
  tz: string | undefined,
  readLink: () => string
): string | undefined => {
  if (tz !== undefined) return tz.startsWith(":") ? tz.slice(1) : tz
  try {
    const target = readLink()
    const at = target.lastIndexOf("zoneinfo/")
    return at === -1 ? undefined : target.slice(at + "zoneinfo/".length)
  } catch {
    return undefined
  }
}

/**
 * The machine's time zone, named as Intl names it. A machine declared to be on UTC (under any of its names) whose
 * clock agrees (no offset now nor half a year from now) is "UTC" without asking Intl: its first use loads locale
 * data, a large share of a short command's start-up. Any other machine gets Intl's answer.
 */
export const machineTimeZone = (): string => {
  const declared = declaredZone(process.env.TZ, () => NodeFs.readlinkSync("/etc/localtime"))
  const now = Date.now()
  const noOffset = new Date(now).getTimezoneOffset() === 0 && new Date(now + 182 * DAY_MS).getTimezoneOffset() === 0
  return declared !== undefined && utcZoneNames.has(declared) && noOffset
    ? "UTC"
    : Intl.DateTimeFormat().resolvedOptions().timeZone
}
