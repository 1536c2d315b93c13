import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber } from "effect"
import { RunningTurnsLive } from "../../src/layers/RunningTurnsLive.js"
import { RunningTurns } from "../../src/services/RunningTurns.js"

/** A fiber that marks itself as running a turn of `sessionId` until it is interrupted or `finish` is done. */
const turnOf = (sessionId: string) =>
  Effect.gen(function*() {
    const turns = yield* RunningTurns
    const entered = yield* Deferred.make<void>()
    const finish = yield* Deferred.make<void>()
    const fiber = yield* Effect.fork(Effect.uninterruptibleMask((restore) =>
      Effect.zipRight(
        turns.enter(sessionId),
        Effect.ensuring(
          restore(Effect.zipRight(Deferred.succeed(entered, undefined), Deferred.await(finish))),
          turns.leave(sessionId)
        )
      )
    ))
    yield* Deferred.await(entered)
    return { fiber, finish: Deferred.succeed(finish, undefined) }
  })

describe("RunningTurnsLive", () => {
  it.scoped("one turn of a session is counted, stopped by another fiber, and counted out", () =>
    Effect.gen(function*() {
      const turns = yield* RunningTurns
      const one = yield* turnOf("a")
      assert.strictEqual(yield* turns.count, 1)
      assert.strictEqual(yield* turns.stop("b"), 0)
      assert.strictEqual(yield* turns.stop("a"), 1)
      assert.isTrue(Exit.isInterrupted(yield* Fiber.await(one.fiber)))
      assert.strictEqual(yield* turns.count, 0)
      assert.strictEqual(yield* turns.stop("a"), 0)
    }).pipe(Effect.provide(RunningTurnsLive)))

  it.scoped("several turns of one session: each counted, the first to end leaves the others stoppable", () =>
    Effect.gen(function*() {
      const turns = yield* RunningTurns
      const first = yield* turnOf("s")
      const second = yield* turnOf("s")
      const third = yield* turnOf("s")
      const other = yield* turnOf("t")
      assert.strictEqual(yield* turns.count, 4)
      yield* first.finish
      assert.isTrue(Exit.isSuccess(yield* Fiber.await(first.fiber)))
      assert.strictEqual(yield* turns.count, 3)
      assert.strictEqual(yield* turns.stop("s"), 2)
      assert.isTrue(Exit.isInterrupted(yield* Fiber.await(second.fiber)))
      assert.isTrue(Exit.isInterrupted(yield* Fiber.await(third.fiber)))
      assert.strictEqual(yield* turns.count, 1)
      // A new turn of the session after all of them ended is counted again, alone.
      const again = yield* turnOf("s")
      assert.strictEqual(yield* turns.count, 2)
      yield* again.finish
      yield* other.finish
      yield* Fiber.await(again.fiber)
      yield* Fiber.await(other.fiber)
      assert.strictEqual(yield* turns.count, 0)
    }).pipe(Effect.provide(RunningTurnsLive)))

  it.scoped("leave unmarks the calling fiber only: another fiber's turn of the session stays counted", () =>
    Effect.gen(function*() {
      const turns = yield* RunningTurns
      const running = yield* turnOf("s")
      yield* turns.leave("s")
      assert.strictEqual(yield* turns.count, 1)
      yield* running.finish
      yield* Fiber.await(running.fiber)
      assert.strictEqual(yield* turns.count, 0)
    }).pipe(Effect.provide(RunningTurnsLive)))

  it.scoped("a turn that stops its own session interrupts the others, never itself", () =>
    Effect.gen(function*() {
      const turns = yield* RunningTurns
      const running = yield* turnOf("s")
      const stopped = yield* Effect.uninterruptibleMask((restore) =>
        Effect.zipRight(turns.enter("s"), Effect.ensuring(restore(turns.stop("s")), turns.leave("s")))
      )
      assert.strictEqual(stopped, 1)
      assert.isTrue(Exit.isInterrupted(yield* Fiber.await(running.fiber)))
      assert.strictEqual(yield* turns.count, 0)
    }).pipe(Effect.provide(RunningTurnsLive)))
})
