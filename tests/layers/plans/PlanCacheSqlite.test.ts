import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { makePlanCache } from "../../../src/layers/plans/PlanCacheSqlite.js"
import { synchronousLevel } from "../../support/Sqlite.js"

/** The plan cache of a fresh database, a plan saved: the level its connection is left at. */
const synchronousUnder = (fsync: "always" | "batch") =>
  synchronousLevel("plans.sqlite", (file) => makePlanCache(file, fsync), (cache) =>
    Effect.map(
      cache.save({
        request: "add 1 and 2",
        plan: { steps: [] },
        signature: {},
        answer: { kind: "template", text: "3" },
        source_trace: "trace-1"
      }, 1_000),
      (saved) => assert.strictEqual(saved.successes, 1)
    ))

describe("PlanCacheSqlite", () => {
  it.scoped("as durable as the traces: under batch no plan written waits for the disk, under always each does", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* synchronousUnder("batch"), 1)
      assert.strictEqual(yield* synchronousUnder("always"), 2)
    }))
})
