import { assert, describe, it } from "@effect/vitest"
import type { BudgetRead } from "../../../src/domain/ExecutionTrace.js"
import { BudgetReadLog } from "../../../src/programs/turn/BudgetReads.js"

const read = (spent: number): BudgetRead => ({
  level: "ok",
  day: "2026-12-05",
  time_zone: "UTC",
  spent_eur: spent,
  reserved_eur: 0,
  soft_cap_eur: 1,
  hard_cap_eur: 2,
  resets_at: 0,
  override_until: null,
  soft_notice_pending: false
})

describe("BudgetReadLog", () => {
  it("gives back every read in order, runs of the same record included", () => {
    const a = read(0)
    const b = read(0.5)
    const c = read(0)
    const log = new BudgetReadLog()
    assert.deepStrictEqual(log.all(), [])
    assert.strictEqual(log.latest, undefined)
    const pushed = [a, a, b, b, b, a, c, c]
    for (const each of pushed) log.push(each)
    const all = log.all()
    assert.strictEqual(all.length, pushed.length)
    pushed.forEach((each, i) => assert.strictEqual(all[i], each))
    assert.strictEqual(log.latest, c)
    // Each call gives an array of its own.
    assert.notStrictEqual(log.all(), all)
  })
})
