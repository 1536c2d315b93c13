import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Either, Exit, Fiber, FiberRef, TestClock } from "effect"
import { type Schedule, timeoutFail, timeoutFailWith } from "../../src/programs/Timeout.js"

/** A timer under the test's control: `fire()` runs the scheduled task, if it was not cancelled. */
const manualTimer = () => {
  let task: (() => void) | undefined
  let scheduled = 0
  let cancelled = 0
  const schedule: Schedule = (run) => {
    scheduled++
    task = run
    return () => {
      cancelled++
      task = undefined
    }
  }
  return {
    schedule,
    fire: () => task?.(),
    scheduled: () => scheduled,
    cancelled: () => cancelled,
    pending: () => task !== undefined
  }
}

/**
 * An effect that never ends, under the limit of a manual timer, started in a fiber of its own (through `caller`
 * when given); `cleanedUp()` once it is interrupted.
 */
const startSlowIn = <A, E>(
  caller: (limited: Effect.Effect<never, string>, cleanedUp: () => boolean) => Effect.Effect<A, E>
) =>
  Effect.gen(function*() {
    const timer = manualTimer()
    const started = yield* Deferred.make<void>()
    let interrupted = false
    const slow = Deferred.succeed(started, undefined).pipe(
      Effect.zipRight(Effect.never),
      Effect.onInterrupt(() => Effect.sync(() => (interrupted = true)))
    )
    const cleanedUp = () => interrupted
    const fiber = yield* Effect.fork(caller(timeoutFailWith(slow, 1000, () => "timed out", timer.schedule), cleanedUp))
    yield* Deferred.await(started)
    return { timer, fiber, cleanedUp }
  })

const startSlow = startSlowIn((limited) => limited)

class Greeting extends Context.Tag("Greeting")<Greeting, string>() {}
const level = FiberRef.unsafeMake(0)

describe("timeoutFailWith", () => {
  it.effect("a result within the limit is returned and the timer cancelled", () =>
    Effect.gen(function*() {
      const timer = manualTimer()
      const result = yield* timeoutFailWith(Effect.succeed(42), 1000, () => "late", timer.schedule)
      assert.strictEqual(result, 42)
      assert.isFalse(timer.pending())
      const failed = yield* Effect.either(timeoutFailWith(Effect.fail("boom"), 1000, () => "late", timer.schedule))
      assert.deepStrictEqual(failed, Either.left("boom"))
    }))

  it.effect("an effect that completes without waiting sets no timer", () =>
    Effect.gen(function*() {
      const timer = manualTimer()
      assert.strictEqual(yield* timeoutFailWith(Effect.sync(() => 42), 1000, () => "late", timer.schedule), 42)
      const failed = yield* Effect.exit(timeoutFailWith(Effect.fail("boom"), 1000, () => "late", timer.schedule))
      assert.deepStrictEqual(failed, Exit.fail("boom"))
      const died = yield* Effect.exit(timeoutFailWith(Effect.die("bug"), 1000, () => "late", timer.schedule))
      assert.deepStrictEqual(died, Exit.die("bug"))
      assert.strictEqual(timer.scheduled(), 0)
    }))

  it.effect("one that waits is limited, and the timer cancelled when it answers in time", () =>
    Effect.gen(function*() {
      const timer = manualTimer()
      const answer = yield* Deferred.make<number>()
      const fiber = yield* Effect.fork(timeoutFailWith(Deferred.await(answer), 1000, () => "late", timer.schedule))
      yield* Effect.yieldNow()
      assert.isTrue(timer.pending())
      yield* Deferred.succeed(answer, 7)
      assert.strictEqual(yield* Fiber.join(fiber), 7)
      assert.strictEqual(timer.cancelled(), 1)
    }))

  it.effect("the effect runs with the caller's services, fiber refs, span and interruptibility", () =>
    Effect.gen(function*() {
      const timer = manualTimer()
      const seen = yield* timeoutFailWith(
        Effect.all({
          service: Greeting,
          ref: FiberRef.get(level),
          span: Effect.map(Effect.currentSpan, (span) => span.name),
          interruptible: Effect.checkInterruptible(Effect.succeed)
        }),
        1000,
        () => "late",
        timer.schedule
      ).pipe(
        Effect.provideService(Greeting, "hello"),
        Effect.locally(level, 3),
        Effect.withSpan("caller")
      )
      assert.deepStrictEqual(seen, { service: "hello", ref: 3, span: "caller", interruptible: true })
    }))

  it.effect("past the limit the effect is interrupted, its interruption awaited, and the result is onTimeout()", () =>
    Effect.gen(function*() {
      const { cleanedUp, fiber, timer } = yield* startSlow
      timer.fire()
      const exit = yield* Fiber.await(fiber)
      assert.deepStrictEqual(exit, Exit.fail("timed out"))
      assert.isTrue(cleanedUp())
    }))

  it.effect("interrupting the caller interrupts the effect and cancels the timer", () =>
    Effect.gen(function*() {
      const { cleanedUp, fiber, timer } = yield* startSlow
      yield* Fiber.interrupt(fiber)
      assert.isTrue(cleanedUp())
      assert.isFalse(timer.pending())
      assert.strictEqual(timer.cancelled(), 1)
    }))

  it.effect("interrupted, it returns only once the effect's own interruption has finished", () =>
    Effect.gen(function*() {
      // What the caller does next, in its own uninterruptible region (a turn records the interrupted call there),
      // sees the effect stopped: it is not left running until the caller's fiber ends.
      let seen: boolean | undefined
      const { fiber } = yield* startSlowIn((limited, cleanedUp) =>
        Effect.uninterruptibleMask((restore) =>
          Effect.catchAllCause(restore(limited), () => Effect.sync(() => (seen = cleanedUp())))
        )
      )
      yield* Fiber.interrupt(fiber)
      assert.isTrue(seen)
    }))
})

describe("timeoutFail", () => {
  it.effect("under a test's clock, the limit is that clock's", () =>
    Effect.gen(function*() {
      // A minute: a real timer would not fire within the test's own time limit.
      const fiber = yield* Effect.fork(timeoutFail(Effect.never, 60_000, () => "timed out"))
      yield* TestClock.adjust("59999 millis")
      assert.isNull(fiber.unsafePoll())
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(yield* Fiber.await(fiber), Exit.fail("timed out"))
      assert.strictEqual(yield* timeoutFail(Effect.succeed(1), 1000, () => "timed out"), 1)
    }))

  // Past the limit under the default clock is a real timer's business: timeoutFailWith's tests cover it with a
  // timer of their own.
  it.live("under the default clock, an answer is returned", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* timeoutFail(Effect.sync(() => 2), 1000, () => "timed out"), 2)
      assert.deepStrictEqual(yield* Effect.exit(timeoutFail(Effect.fail("no"), 1000, () => "late")), Exit.fail("no"))
    }))
})
