import { assert, describe, it } from "@effect/vitest"
import { Cron, FastCheck } from "effect"
import { dailyCron } from "../../src/programs/Daily.js"

describe("dailyCron", () => {
  it("fires in UTC (a fixed offset, no Intl) when the named zone would", () => {
    const times = FastCheck.constantFrom("00:00", "03:30", "07:45", "12:00", "23:59")
    const instants = FastCheck.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2200, 0, 1) })
    FastCheck.assert(
      FastCheck.property(times, instants, (at, millis) => {
        const after = new Date(millis)
        assert.strictEqual(
          Cron.next(dailyCron(at, "UTC"), after).getTime(),
          Cron.next(dailyCron(at, "Etc/UTC"), after).getTime(),
          `${at} after ${after.toISOString()}`
        )
      }),
      { numRuns: 500 }
    )
  })

  it("keeps a named zone's daylight saving", () => {
    // 03:30 in Rome is 02:30 UTC in winter (UTC+1) and 01:30 UTC in summer (UTC+2).
    const winter = Cron.next(dailyCron("03:30", "Europe/Rome"), new Date(Date.UTC(2026, 0, 10, 12)))
    const summer = Cron.next(dailyCron("03:30", "Europe/Rome"), new Date(Date.UTC(2026, 6, 10, 12)))
    assert.strictEqual(winter.toISOString(), "2026-01-11T02:30:00.000Z")
    assert.strictEqual(summer.toISOString(), "2026-07-11T01:30:00.000Z")
  })
})
