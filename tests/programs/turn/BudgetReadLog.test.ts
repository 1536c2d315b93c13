import { assert, describe, it } from "@effect/vitest"
import { BudgetRead } from "../../../src/domain/ExecutionTrace.js"
import { BudgetReadLog, sameRead } from "../../../src/programs/turn/BudgetReads.js"

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

  it("two reads are the same when every field of the schema is", () => {
    const base = read(0.25)
    assert.isTrue(sameRead(base, { ...base }))
    const other: Record<keyof BudgetRead, unknown> = {
      level: "soft",
      day: "2026-12-06",
      time_zone: "Europe/Rome",
      spent_eur: 0.5,
      reserved_eur: 0.1,
      soft_cap_eur: 3,
      hard_cap_eur: 4,
      resets_at: 1,
      override_until: 5,
      soft_notice_pending: true
    }
    // Every field the schema has, and no other: a field added to reads must be compared too.
    assert.deepStrictEqual(Object.keys(other).sort(), Object.keys(BudgetRead.fields).sort())
    for (const [field, value] of Object.entries(other)) {
      assert.isFalse(sameRead(base, { ...base, [field]: value }), field)
    }
  })
})
