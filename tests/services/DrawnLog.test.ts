import { assert, describe, it } from "@effect/vitest"
import { Effect, FiberRef } from "effect"
import { drawId, DrawnIds, DrawnLog } from "../../src/services/IdGenerator.js"

describe("DrawnLog", () => {
  it("gives back every id drawn, in order, from none to several", () => {
    const log = new DrawnLog()
    assert.deepStrictEqual(log.all(), [])
    log.push({ kind: "trace", id: "t-1" })
    assert.deepStrictEqual(log.all(), [{ kind: "trace", id: "t-1" }])
    log.push({ kind: "wrapper", id: "w-1" })
    log.push({ kind: "approval", id: "a-1" })
    assert.deepStrictEqual(log.all(), [
      { kind: "trace", id: "t-1" },
      { kind: "wrapper", id: "w-1" },
      { kind: "approval", id: "a-1" }
    ])
  })

  it.effect("receives the ids handed out in the fiber that set it, and in the fibers it forks", () =>
    Effect.gen(function*() {
      const log = new DrawnLog()
      yield* FiberRef.set(DrawnIds, log)
      assert.strictEqual(yield* drawId("trace", () => "t-1"), "t-1")
      yield* Effect.fork(drawId("wrapper", () => "w-1")).pipe(Effect.flatMap((fiber) => fiber.await))
      assert.deepStrictEqual(log.all(), [{ kind: "trace", id: "t-1" }, { kind: "wrapper", id: "w-1" }])
    }))

  it.effect("without a log, an id is handed out and recorded nowhere", () =>
    Effect.map(drawId("session", () => "s-1"), (id) => assert.strictEqual(id, "s-1")))
})
