import { assert, describe, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import {
  declaredZone,
  localDay,
  localDayBounds,
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
