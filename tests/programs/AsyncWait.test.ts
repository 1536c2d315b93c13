import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber } from "effect"
import { waitCleanedUp } from "../../src/programs/AsyncWait.js"

/** A wait whose callback the test calls: how often it began and was cleaned up, and its `resume`. */
const controlledWait = () => {
  let resume: ((effect: Effect.Effect<number, string>) => void) | undefined
  let started = 0
  let cleanedUp = 0
  const wait = waitCleanedUp<number, string>((callback) => {
    started++
    resume = callback
    return () => {
      cleanedUp++
    }
  })
  return {
    wait,
    resume: (effect: Effect.Effect<number, string>) => resume!(effect),
    started: () => started,
    cleanedUp: () => cleanedUp
  }
}

describe("waitCleanedUp", () => {
  it.effect("an answer is the wait's result; nothing is cleaned up", () =>
    Effect.gen(function*() {
      const wait = controlledWait()
      const fiber = yield* Effect.fork(wait.wait)
      yield* Effect.yieldNow()
      assert.strictEqual(wait.started(), 1)
      wait.resume(Effect.succeed(7))
      assert.deepStrictEqual(yield* Fiber.await(fiber), Exit.succeed(7))
      assert.strictEqual(wait.cleanedUp(), 0)
    }))

  it.effect("a failure is the wait's failure; nothing is cleaned up", () =>
    Effect.gen(function*() {
      const wait = controlledWait()
      const fiber = yield* Effect.fork(wait.wait)
      yield* Effect.yieldNow()
      wait.resume(Effect.fail("refused"))
      assert.deepStrictEqual(yield* Fiber.await(fiber), Exit.fail("refused"))
      assert.strictEqual(wait.cleanedUp(), 0)
    }))

  it.effect("interrupted while waiting: cleaned up once, and an answer after that is not taken", () =>
    Effect.gen(function*() {
      const wait = controlledWait()
      const fiber = yield* Effect.fork(wait.wait)
      yield* Effect.yieldNow()
      const exit = yield* Fiber.interrupt(fiber)
      assert.isTrue(Exit.isInterrupted(exit))
      assert.strictEqual(wait.cleanedUp(), 1)
      wait.resume(Effect.succeed(7))
      yield* Effect.yieldNow()
      assert.strictEqual(wait.cleanedUp(), 1)
    }))

  it.effect("interrupted before the wait began: it never begins, nothing to clean up", () =>
    Effect.gen(function*() {
      const wait = controlledWait()
      const fiber = yield* Effect.fork(Effect.zipRight(Effect.yieldNow(), wait.wait))
      const exit = yield* Fiber.interrupt(fiber)
      assert.isTrue(Exit.isInterrupted(exit))
      assert.strictEqual(wait.started(), 0)
      assert.strictEqual(wait.cleanedUp(), 0)
    }))

  it.effect("in an uninterruptible region the wait is not interrupted: its answer is taken, nothing cleaned up", () =>
    Effect.gen(function*() {
      const wait = controlledWait()
      let answer: number | undefined
      const fiber = yield* Effect.fork(
        Effect.uninterruptible(Effect.tap(wait.wait, (n) => Effect.sync(() => answer = n)))
      )
      yield* Effect.yieldNow()
      const interrupting = yield* Effect.fork(Fiber.interrupt(fiber))
      yield* Effect.yieldNow()
      assert.isUndefined(answer)
      wait.resume(Effect.succeed(7))
      yield* Fiber.join(interrupting)
      assert.strictEqual(answer, 7)
      assert.strictEqual(wait.cleanedUp(), 0)
    }))
})
