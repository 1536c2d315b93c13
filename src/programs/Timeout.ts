import { Cause, Clock, Context, DefaultServices, Effect, Exit, Fiber, FiberId, FiberRefs, Runtime } from "effect"
import { waitCleanedUp } from "./AsyncWait.js"
import { makeSharedTimers, type Schedule } from "./SharedTimers.js"

export type { Schedule } from "./SharedTimers.js"

/** The clock every fiber starts with: its sleeps are plain timers. */
const defaultClock = Effect.runSync(Effect.clock)

// Past this, a JavaScript timer fires at once: such a limit is no limit.
const MAX_TIMER_MS = 2 ** 31 - 1

// Limits of one length share a timer (see makeSharedTimers): most end long before it would fire.
const shared = makeSharedTimers({ now: () => performance.now(), start: (fire, ms) => setTimeout(fire, ms) })

const timers: Schedule = (task, ms) => ms > MAX_TIMER_MS ? () => undefined : shared(task, ms)

/**
 * `self` with a limit of `ms` over one fiber and a timer, where `Effect.timeoutFail` races two fibers (the
 * effect's and a sleep's) for every call. Same contract: past the limit `self` is interrupted, its interruption
 * awaited, and the result is `onTimeout()`; interrupting the caller interrupts `self`.
 *
 * `self`'s fiber starts at once, on the caller's stack, with the caller's services, fiber refs and span (a forked
 * fiber would only start on the scheduler's next turn, and the caller be resumed on the turn after): an effect
 * that completes without waiting (a computation, a cached answer) has its result before any timer is set, and
 * one that waits has already started when the limit begins.
 * One uninterruptible region for all of it: the wait registers no canceler of its own (that would be another
 * region); an interrupted wait is cleaned up here, from its exit.
 */
export const timeoutFailWith = <A, E, R, E2>(
  self: Effect.Effect<A, E, R>,
  ms: number,
  onTimeout: () => E2,
  schedule: Schedule
): Effect.Effect<A, E | E2, R> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(Effect.runtime<R>(), (runtime) => limited(self, ms, onTimeout, schedule, restore, runtime))
  )

/** `timeoutFailWith` from inside its region, given the caller's runtime. */
const limited = <A, E, R, E2>(
  self: Effect.Effect<A, E, R>,
  ms: number,
  onTimeout: () => E2,
  schedule: Schedule,
  restore: <AX, EX, RX>(effect: Effect.Effect<AX, EX, RX>) => Effect.Effect<AX, EX, RX>,
  runtime: Runtime.Runtime<R>
): Effect.Effect<A, E | E2> => {
  const child = Runtime.runFork(runtime, restore(self))
  const completed = child.unsafePoll()
  if (completed !== null) return completed
  let settled = false
  let cancel = (): void => undefined
  let resume: (effect: Effect.Effect<A, E | E2>) => void = () => undefined
  const observer = (exit: Exit.Exit<A, E>) => {
    if (settled) return
    settled = true
    cancel()
    resume(exit)
  }
  const wait = Effect.async<A, E | E2>((callback) => {
    resume = callback
    if (settled) return
    cancel = schedule(() => {
      if (settled) return
      settled = true
      child.removeObserver(observer)
      callback(Effect.zipRight(Fiber.interrupt(child), Effect.fail(onTimeout())))
    }, ms)
    child.addObserver(observer)
  })
  // One handler, for failures only: an answer passes it by.
  return Effect.catchAllCause(restore(wait), (cause) => {
    if (!Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
    // Interrupted at any point, even before the wait began: `self` is interrupted too, and awaited.
    settled = true
    cancel()
    child.removeObserver(observer)
    return Effect.zipRight(Fiber.interrupt(child), Effect.failCause(cause))
  })
}

/**
 * `Effect.timeoutFail` on a hot path: under the default clock, one fiber and a timer (see `timeoutFailWith`);
 * under any other clock (a test's), `Effect.timeoutFail` itself, so that the clock decides when time passes.
 */
export const timeoutFail = <A, E, R, E2>(
  self: Effect.Effect<A, E, R>,
  ms: number,
  onTimeout: () => E2
): Effect.Effect<A, E | E2, R> =>
  // The clock is read from the runtime the region needs anyway: one operation for both.
  Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(Effect.runtime<R>(), (runtime) =>
      clockOf(runtime) === defaultClock
        ? limited(self, ms, onTimeout, timers, restore, runtime)
        : restore(Effect.timeoutFail(self, { duration: ms, onTimeout })))
  )

/** What a task written as a promise is given: the signal that asks it to stop. */
export interface PromiseTask {
  /** Aborted when the limit passes (reason: a `TimeoutError`) or the caller is interrupted (an `AbortError`). */
  readonly signal: AbortSignal
}

/**
 * The task given to `run`: its signal made on first read (an AbortController, microseconds to make), aborted
 * already when read after the task was given up. A class rather than an object literal with a getter: such a
 * literal, made on every call, is kept by V8's young-generation collections beyond its last use, and with it
 * whatever its getter's scope holds (here the caller's fiber, and so its whole conversation), which is then
 * copied and promoted to the old generation on every call.
 */
class LazySignalTask implements PromiseTask {
  private controller: AbortController | undefined = undefined
  // Why the task is no longer waited for, once it is not: a signal first read after that is born aborted.
  private abortedWith: unknown = undefined
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController()
      if (this.abortedWith !== undefined) this.controller.abort(this.abortedWith)
    }
    return this.controller.signal
  }
  abort(reason: unknown): void {
    this.abortedWith = reason
    this.controller?.abort(reason)
  }
}

/**
 * `run()`'s promise with a limit of `ms`: one wait and a timer, where `timeoutFailWith` needs a fiber for the
 * effect it limits (a promise runs by itself: nothing has to be interrupted to stop waiting for it). Past the
 * limit the result is `onTimeout()`; a rejection, or a throw before any promise, is `onReject(error)`. Past the
 * limit, and when the caller is interrupted, the signal given to `run` is aborted and the promise is left to
 * end by itself: a promise cannot be stopped from outside, the signal asks it to stop. The signal (an
 * AbortController, microseconds to make) is made only when `run` reads it, aborted already if read too late.
 */
export const promiseTimeoutFailWith = <A, E, E2>(
  run: (task: PromiseTask) => PromiseLike<A>,
  onReject: (error: unknown) => E,
  ms: number,
  onTimeout: () => E2,
  schedule: Schedule
): Effect.Effect<A, E | E2> =>
  waitCleanedUp<A, E | E2>((resume) => {
    const task = new LazySignalTask()
    let promise: PromiseLike<A>
    try {
      // A function that is not async may answer without a promise: it is taken as resolved.
      promise = Promise.resolve(run(task))
    } catch (error) {
      resume(Effect.fail(onReject(error)))
      return undefined
    }
    let settled = false
    const cancel = schedule(() => {
      if (settled) return
      settled = true
      task.abort(new DOMException(`timed out after ${ms} ms`, "TimeoutError"))
      resume(Effect.fail(onTimeout()))
    }, ms)
    promise.then(
      (value) => {
        if (settled) return
        settled = true
        cancel()
        resume(Effect.succeed(value))
      },
      (error: unknown) => {
        if (settled) return
        settled = true
        cancel()
        resume(Effect.fail(onReject(error)))
      }
    )
    return () => {
      if (settled) return
      settled = true
      cancel()
      task.abort(new DOMException("the caller stopped waiting", "AbortError"))
    }
  })

/**
 * `promiseTimeoutFailWith` under the default clock with a timer; under any other clock (a test's) with a sleep on
 * that clock, so that the clock decides when time passes.
 */
export const promiseTimeoutFail = <A, E, E2>(
  run: (task: PromiseTask) => PromiseLike<A>,
  onReject: (error: unknown) => E,
  ms: number,
  onTimeout: () => E2
): Effect.Effect<A, E | E2> =>
  Effect.clockWith((clock) =>
    clock === defaultClock
      ? promiseTimeoutFailWith(run, onReject, ms, onTimeout, timers)
      : Effect.flatMap(
        Effect.runtime<never>(),
        (runtime) => promiseTimeoutFailWith(run, onReject, ms, onTimeout, sleeps(runtime))
      )
  )

/** Tasks run after a sleep on the runtime's clock, each in a fiber of its own (interrupted to cancel it). */
const sleeps = (runtime: Runtime.Runtime<never>): Schedule => (task, ms) => {
  const fiber = Runtime.runFork(runtime, Effect.zipRight(Effect.sleep(ms), Effect.sync(task)))
  return () => fiber.unsafeInterruptAsFork(FiberId.none)
}

/** The clock of the fiber the runtime was taken from (a test's, or the default one). */
const clockOf = <R>(runtime: Runtime.Runtime<R>): Clock.Clock =>
  Context.get(FiberRefs.getOrDefault(runtime.fiberRefs, DefaultServices.currentServices), Clock.Clock)
