import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { makeOneAtATime } from "../../src/programs/OneAtATime.js"

/** Work that records its start, then waits until released. */
const makeJob = (name: string, log: Array<string>) => {
  const release = Effect.runSync(Deferred.make<void>())
  const started = Effect.runSync(Deferred.make<void>())
  const work = Effect.sync(() => log.push(`${name} starts`)).pipe(
    Effect.zipRight(Deferred.succeed(started, undefined)),
    Effect.zipRight(Deferred.await(release)),
    Effect.zipRight(Effect.sync(() => log.push(`${name} ends`))),
    Effect.as(name)
  )
  return { work, started: Deferred.await(started), release: Deferred.succeed(release, undefined) }
}

/** Forks `work` on `key` and returns once it runs or waits (its `onWait` heard). */
const forkQueued = (
  order: ReturnType<typeof makeOneAtATime>,
  key: string,
  work: Effect.Effect<string, string>,
  aheads: Array<number>
) =>
  Effect.gen(function*() {
    const placed = yield* Deferred.make<void>()
    const fiber = yield* Effect.fork(
      order.run(
        key,
        Effect.zipRight(Deferred.succeed(placed, undefined), work),
        (ahead) => Effect.zipRight(Effect.sync(() => aheads.push(ahead)), Deferred.succeed(placed, undefined))
      )
    )
    yield* Deferred.await(placed)
    return fiber
  })

describe("one at a time per key", () => {
  it.effect("work of one key runs in the order it came, each after the one before has ended", () =>
    Effect.gen(function*() {
      const order = makeOneAtATime()
      const log: Array<string> = []
      const aheads: Array<number> = []
      const jobs = ["a", "b", "c", "d"].map((name) => makeJob(name, log))
      const fibers = []
      for (const job of jobs) fibers.push(yield* forkQueued(order, "k", job.work, aheads))
      assert.deepStrictEqual(aheads, [1, 2, 3])
      for (const job of jobs) {
        yield* job.started
        yield* job.release
      }
      assert.deepStrictEqual(yield* Fiber.joinAll(fibers), ["a", "b", "c", "d"])
      assert.deepStrictEqual(log, [
        "a starts",
        "a ends",
        "b starts",
        "b ends",
        "c starts",
        "c ends",
        "d starts",
        "d ends"
      ])
      assert.strictEqual(order.busy, 0)
    }))

  it.effect("work of another key does not wait", () =>
    Effect.gen(function*() {
      const order = makeOneAtATime()
      const log: Array<string> = []
      const a = makeJob("a", log)
      const b = makeJob("b", log)
      const first = yield* forkQueued(order, "k1", a.work, [])
      const second = yield* forkQueued(order, "k2", b.work, [])
      yield* b.started
      yield* b.release
      assert.strictEqual(yield* Fiber.join(second), "b")
      yield* a.release
      assert.strictEqual(yield* Fiber.join(first), "a")
      assert.strictEqual(order.busy, 0)
    }))

  it.effect("work interrupted while it waits leaves its place; the next runs after the one before", () =>
    Effect.gen(function*() {
      const order = makeOneAtATime()
      const log: Array<string> = []
      const [a, b, c] = ["a", "b", "c"].map((name) => makeJob(name, log)) as [
        ReturnType<typeof makeJob>,
        ReturnType<typeof makeJob>,
        ReturnType<typeof makeJob>
      ]
      const first = yield* forkQueued(order, "k", a.work, [])
      const second = yield* forkQueued(order, "k", b.work, [])
      const third = yield* forkQueued(order, "k", c.work, [])
      yield* Fiber.interrupt(second)
      assert.deepStrictEqual(log, ["a starts"], "the third waits for the first, not for the one that left")
      yield* a.release
      yield* c.started
      yield* c.release
      assert.strictEqual(yield* Fiber.join(first), "a")
      assert.strictEqual(yield* Fiber.join(third), "c")
      assert.deepStrictEqual(log, ["a starts", "a ends", "c starts", "c ends"])
      assert.strictEqual(order.busy, 0)
    }))

  it.effect("work that fails or is interrupted while it runs hands the key on", () =>
    Effect.gen(function*() {
      const order = makeOneAtATime()
      const log: Array<string> = []
      const a = makeJob("a", log)
      const c = makeJob("c", log)
      const first = yield* forkQueued(order, "k", a.work, [])
      const failing = yield* forkQueued(order, "k", Effect.fail("no"), [])
      const third = yield* forkQueued(order, "k", c.work, [])
      yield* a.started
      yield* Fiber.interrupt(first)
      assert.deepStrictEqual(yield* Effect.flip(Fiber.join(failing)), "no")
      yield* c.started
      yield* c.release
      assert.strictEqual(yield* Fiber.join(third), "c")
      assert.strictEqual(order.busy, 0)
    }))
})
