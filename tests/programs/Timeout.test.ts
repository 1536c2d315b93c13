import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Either, Exit, Fiber, FiberRef, TestClock } from "effect"
import {
  type PromiseTask,
  promiseTimeoutFail,
  promiseTimeoutFailWith,
  type Schedule,
  timeoutFail,
  timeoutFailWith
} from "../../src/programs/Timeout.js"

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

/** A promise settled by the test, with the task (and so the signal) the limited function was given. */
const pendingTask = <A>() => {
  let settle: { resolve: (value: A) => void; reject: (error: unknown) => void } | undefined
  let given: PromiseTask | undefined
  const run = (task: PromiseTask) => {
    given = task
    return new Promise<A>((resolve, reject) => (settle = { resolve, reject }))
  }
  return {
    run,
    resolve: (value: A) => settle!.resolve(value),
    reject: (error: unknown) => settle!.reject(error),
    signal: () => given!.signal
  }
}

const rejected = (error: unknown) => `rejected: ${error instanceof Error ? error.message : String(error)}`

/** `run` limited to 1000 ms by `timer`, started in a fiber of its own and given the turn to begin. */
const startLimited = <A>(run: (task: PromiseTask) => PromiseLike<A>, timer: ReturnType<typeof manualTimer>) =>
  Effect.tap(
    Effect.fork(promiseTimeoutFailWith(run, rejected, 1000, () => "late", timer.schedule)),
    () => Effect.yieldNow()
  )

describe("promiseTimeoutFailWith", () => {
  it.effect("a promise settled within the limit gives its value or its rejection, and the timer is cancelled", () =>
    Effect.gen(function*() {
      const timer = manualTimer()
      const ok = pendingTask<number>()
      const fiber = yield* startLimited(ok.run, timer)
      assert.isTrue(timer.pending())
      ok.resolve(42)
      assert.deepStrictEqual(yield* Fiber.await(fiber), Exit.succeed(42))
      assert.isFalse(timer.pending())
      assert.isFalse(ok.signal().aborted)

      const bad = pendingTask<number>()
      const failing = yield* startLimited(bad.run, timer)
      bad.reject(new Error("no such file"))
      assert.deepStrictEqual(yield* Fiber.await(failing), Exit.fail("rejected: no such file"))
      assert.isFalse(timer.pending())
    }))

  it.effect("a throw before any promise is a rejection; a value that is not a promise is the answer", () =>
    Effect.gen(function*() {
      const timer = manualTimer()
      const thrown = yield* Effect.exit(promiseTimeoutFailWith(
        () => {
          throw new Error("bad input")
        },
        rejected,
        1000,
        () => "late",
        timer.schedule
      ))
      assert.deepStrictEqual(thrown, Exit.fail("rejected: bad input"))
      assert.strictEqual(timer.scheduled(), 0, "no timer for a call that never started")
      const plain = (() => 7) as unknown as (task: PromiseTask) => PromiseLike<number>
      assert.strictEqual(yield* promiseTimeoutFailWith(plain, rejected, 1000, () => "late", timer.schedule), 7)
    }))

  it.effect("past the limit: the timeout failure, the signal aborted as a timeout, a later answer ignored", () =>
    Effect.gen(function*() {
      const timer = manualTimer()
      const slow = pendingTask<number>()
      const fiber = yield* startLimited(slow.run, timer)
      timer.fire()
      assert.deepStrictEqual(yield* Fiber.await(fiber), Exit.fail("late"))
      assert.isTrue(slow.signal().aborted)
      assert.strictEqual((slow.signal().reason as DOMException).name, "TimeoutError")
      // The answer that comes after is not taken: nothing is settled (or cancelled) twice.
      slow.resolve(1)
      yield* Effect.promise(() => Promise.resolve())
      assert.strictEqual(timer.cancelled(), 0)
    }))

  it.effect("interrupting the caller aborts the signal and cancels the timer", () =>
    Effect.gen(function*() {
      const timer = manualTimer()
      const slow = pendingTask<number>()
      // The signal read as the task starts, as a task passing it to fetch would.
      const run = (task: PromiseTask) => {
        void task.signal
        return slow.run(task)
      }
      const fiber = yield* startLimited(run, timer)
      assert.isFalse(slow.signal().aborted)
      const exit = yield* Fiber.interrupt(fiber)
      assert.isTrue(Exit.isInterrupted(exit))
      assert.isTrue(slow.signal().aborted)
      assert.strictEqual((slow.signal().reason as DOMException).name, "AbortError")
      assert.strictEqual(timer.cancelled(), 1)
      assert.isFalse(timer.pending())
    }))
})

describe("promiseTimeoutFail", () => {
  it.effect("under a test's clock, the limit is that clock's, and the signal is aborted past it", () =>
    Effect.gen(function*() {
      const slow = pendingTask<number>()
      const fiber = yield* Effect.fork(promiseTimeoutFail(slow.run, rejected, 60_000, () => "timed out"))
      yield* TestClock.adjust("59999 millis")
      assert.isNull(fiber.unsafePoll())
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(yield* Fiber.await(fiber), Exit.fail("timed out"))
      assert.isTrue(slow.signal().aborted)
      assert.strictEqual((slow.signal().reason as DOMException).name, "TimeoutError")
      // Answered in time: the sleeping fiber (a root fiber of its own) is interrupted, none is left behind.
      const roots = (yield* Fiber.roots).length
      const quick = pendingTask<number>()
      const answered = yield* Effect.fork(promiseTimeoutFail(quick.run, rejected, 1000, () => "timed out"))
      yield* TestClock.adjust("10 millis")
      assert.strictEqual((yield* Fiber.roots).length, roots + 1)
      quick.resolve(5)
      assert.deepStrictEqual(yield* Fiber.await(answered), Exit.succeed(5))
      yield* Effect.yieldNow()
      assert.strictEqual((yield* Fiber.roots).length, roots)
      assert.isFalse(quick.signal().aborted)
    }))

  it.live("under the default clock, an answer and a rejection are returned", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* promiseTimeoutFail(() => Promise.resolve(2), rejected, 1000, () => "late"), 2)
      const exit = yield* Effect.exit(
        promiseTimeoutFail(() => Promise.reject(new Error("no")), rejected, 1000, () => "late")
      )
      assert.deepStrictEqual(exit, Exit.fail("rejected: no"))
    }))
})
