import { assert, describe, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import {
  dayAfter,
  declaredZone,
  localDay,
  localDayBounds,
  localInstant,
  localMinute,
  machineTimeZone,
  nextLocalMidnight,
  utcZoneNames
} from "../../src/domain/Time.js"

// "UTC" is computed without Intl; "Etc/UTC" is the same zone, computed through Intl: the two must agree.
const instants = FastCheck.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2300, 0, 1) })
const days = FastCheck.date({ min: new Date(Date.UTC(1970, 0, 1)), max: new Date(Date.UTC(2300, 0, 1)) })
  .map((date) => date.toISOString().slice(0, 10))

describe("UTC without Intl", () => {
  it("gives the day, the minute and the next midnight Intl gives", () => {
    FastCheck.assert(
      FastCheck.property(instants, (millis) => {
        assert.strictEqual(localDay(millis, "UTC"), localDay(millis, "Etc/UTC"))
        assert.strictEqual(localMinute(millis, "UTC"), localMinute(millis, "Etc/UTC"))
        assert.strictEqual(nextLocalMidnight(millis, "UTC"), nextLocalMidnight(millis, "Etc/UTC"))
      }),
      { numRuns: 2000 }
    )
  })

  it("gives the bounds of a day Intl gives", () => {
    FastCheck.assert(
      FastCheck.property(days, (day) => {
        assert.deepStrictEqual(localDayBounds(day, "UTC"), localDayBounds(day, "Etc/UTC"))
      }),
      { numRuns: 500 }
    )
  })

  it("is exact at the edges of a day", () => {
    const midnight = Date.UTC(2026, 11, 2)
    assert.strictEqual(localDay(midnight - 1, "UTC"), "2026-12-01")
    assert.strictEqual(localDay(midnight, "UTC"), "2026-12-02")
    assert.strictEqual(nextLocalMidnight(midnight - 1, "UTC"), midnight)
    assert.strictEqual(nextLocalMidnight(midnight, "UTC"), midnight + 86_400_000)
    assert.strictEqual(localMinute(midnight - 1, "UTC"), "2026-12-01 23:59")
    assert.deepStrictEqual(localDayBounds("2026-12-02", "UTC"), { since: midnight, until: midnight + 86_399_999 })
  })
})

describe("the machine's time zone", () => {
  it("lists only names Intl resolves to UTC", () => {
    for (const name of utcZoneNames) {
      assert.strictEqual(new Intl.DateTimeFormat("en", { timeZone: name }).resolvedOptions().timeZone, "UTC", name)
    }
  })

  it("is read from TZ, else from the /etc/localtime link", () => {
    const noLink = () => {
      throw new Error("ENOENT")
    }
    assert.strictEqual(declaredZone(":UTC", noLink), "UTC")
    assert.strictEqual(declaredZone("Europe/Rome", () => "/usr/share/zoneinfo/Etc/UTC"), "Europe/Rome")
    assert.strictEqual(declaredZone("", () => "/usr/share/zoneinfo/Etc/UTC"), "")
    assert.strictEqual(declaredZone(undefined, () => "/usr/share/zoneinfo/Etc/UTC"), "Etc/UTC")
    assert.strictEqual(declaredZone(undefined, () => "/var/db/timezone/zoneinfo/Europe/Rome"), "Europe/Rome")
    assert.strictEqual(declaredZone(undefined, () => "../usr/share/zoneinfo/UTC"), "UTC")
    assert.strictEqual(declaredZone(undefined, () => "/etc/my-zone"), undefined)
    assert.strictEqual(declaredZone(undefined, noLink), undefined)
  })

  it("is what Intl says it is, on this machine and under other TZ settings", () => {
    assert.strictEqual(machineTimeZone(), Intl.DateTimeFormat().resolvedOptions().timeZone)
    // A fresh process per setting: the zone is read once per process. The compiled module is what the CLI runs.
    const compiled = NodePath.resolve("dist", "domain", "Time.js")
    if (!NodeFs.existsSync(compiled)) return
    const script = `import { machineTimeZone } from ${JSON.stringify(compiled)}
console.log(JSON.stringify([machineTimeZone(), Intl.DateTimeFormat().resolvedOptions().timeZone]))`
    for (const tz of ["UTC", ":Etc/UTC", "GMT", "Europe/London", "Europe/Rome", "America/New_York", "Etc/GMT-2"]) {
      const output = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
        env: { ...process.env, TZ: tz },
        encoding: "utf8"
      })
      const [fast, intl] = JSON.parse(output) as [string, string]
      assert.strictEqual(fast, intl, tz)
    }
  })
})

// Zones whose clocks skip midnight on the day summer time starts (that day begins at 01:00), one that moves by half
// an hour, one that skipped a whole day (Samoa, 2011-12-30), and two that move at night.
const movingZones = [
  "America/Santiago",
  "America/Havana",
  "Africa/Cairo",
  "Asia/Beirut",
  "Australia/Lord_Howe",
  "Pacific/Apia",
  "Europe/Rome",
  "America/New_York"
]

/** Every `stepHours` hours from `from` until `to` (UTC days), the instants to check. */
const instantsBetween = (from: string, to: string, stepHours: number) => {
  const out: Array<number> = []
  for (let t = Date.parse(`${from}T00:00:00Z`); t < Date.parse(`${to}T00:00:00Z`); t += stepHours * 3_600_000) {
    out.push(t)
  }
  return out
}

/** A year of each zone's moves; Samoa's skipped day. */
const spanOf = (zone: string): readonly [string, string] =>
  zone === "Pacific/Apia" ? ["2011-12-25", "2012-01-05"] : ["2026-01-01", "2027-01-01"]

describe("days where the clocks move", () => {
  it("the next midnight is where the next local day begins, from any instant of the day before", () => {
    for (const zone of movingZones) {
      for (const millis of instantsBetween(...spanOf(zone), 4)) {
        const next = nextLocalMidnight(millis, zone)
        const at = `${zone} ${new Date(millis).toISOString()}`
        assert.isAbove(next, millis, at)
        assert.strictEqual(localDay(next - 1, zone), localDay(millis, zone), at)
        assert.notStrictEqual(localDay(next, zone), localDay(millis, zone), at)
      }
    }
  })

  it("a day's bounds hold exactly its instants", () => {
    for (const zone of movingZones) {
      for (const millis of instantsBetween(...spanOf(zone), 7)) {
        const day = localDay(millis, zone)
        const { since, until } = localDayBounds(day, zone)
        const at = `${zone} ${day}`
        assert.isAtMost(since, millis, at)
        assert.isAtLeast(until, millis, at)
        assert.strictEqual(localDay(since, zone), day, at)
        assert.strictEqual(localDay(until, zone), day, at)
        assert.notStrictEqual(localDay(since - 1, zone), day, at)
        assert.notStrictEqual(localDay(until + 1, zone), day, at)
      }
    }
  })

  it("in Santiago the day summer time starts begins at 01:00, and the next one at midnight", () => {
    // 2026-09-06: at 00:00 (UTC-4) the clocks go to 01:00 (UTC-3).
    assert.strictEqual(localDayBounds("2026-09-06", "America/Santiago").since, Date.UTC(2026, 8, 6, 4))
    assert.strictEqual(nextLocalMidnight(Date.UTC(2026, 8, 6, 12), "America/Santiago"), Date.UTC(2026, 8, 7, 3))
    assert.strictEqual(localInstant("2026-09-06", 12, 0, "America/Santiago"), Date.UTC(2026, 8, 6, 15))
  })

  it("a wall-clock time the clocks skip is the instant after the skip; one they show twice, the first", () => {
    // Rome, 2026-03-29: 02:00 (UTC+1) becomes 03:00 (UTC+2); 2026-10-25: 03:00 (UTC+2) becomes 02:00 (UTC+1).
    assert.strictEqual(localInstant("2026-03-29", 2, 30, "Europe/Rome"), Date.UTC(2026, 2, 29, 1, 30))
    assert.strictEqual(localInstant("2026-03-29", 23, 59, "Europe/Rome"), Date.UTC(2026, 2, 29, 21, 59))
    assert.strictEqual(localInstant("2026-10-25", 2, 30, "Europe/Rome"), Date.UTC(2026, 9, 25, 0, 30))
    assert.strictEqual(localInstant("2026-10-25", 23, 59, "Europe/Rome"), Date.UTC(2026, 9, 25, 22, 59))
  })

  it("the day after a day is the next calendar day", () => {
    assert.strictEqual(dayAfter("2026-12-31"), "2027-01-01")
    assert.strictEqual(dayAfter("2028-02-28"), "2028-02-29")
    assert.strictEqual(dayAfter("2026-02-28"), "2026-03-01")
  })
})
