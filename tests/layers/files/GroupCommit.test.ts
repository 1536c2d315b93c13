import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Scope } from "effect"
import { makeGroupCommit } from "../../../src/layers/files/GroupCommit.js"

describe("group commit", () => {
  it.effect("writes the jobs queued before the close, and refuses those offered after", () =>
    Effect.gen(function*() {
      const written: Array<number> = []
      const scope = yield* Scope.make()
      const commit = yield* Scope.extend(
        makeGroupCommit<number>({ step: (jobs) => Effect.sync(() => written.push(...jobs)) }),
        scope
      )
      for (let i = 0; i < 5; i++) yield* commit.offer(i)
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(written, [0, 1, 2, 3, 4])
      assert.isFalse(yield* commit.offer(5))
    }))

  it.effect("a request waits for the batch that writes its job; after the close it fails with `closed`", () =>
    Effect.gen(function*() {
      interface Job {
        readonly n: number
        readonly done: Deferred.Deferred<string, string>
      }
      const written: Array<number> = []
      const gate = yield* Deferred.make<void>()
      const scope = yield* Scope.make()
      const commit = yield* Scope.extend(
        makeGroupCommit<Job>({
          // The first batch waits for the gate: the requests behind it are queued, their callers waiting.
          step: (jobs) =>
            Effect.zipRight(
              jobs[0]!.n === 0 ? Deferred.await(gate) : Effect.void,
              Effect.forEach(jobs, (job) => {
                written.push(job.n)
                return job.n === 2 ? Deferred.fail(job.done, "refused 2") : Deferred.succeed(job.done, `wrote ${job.n}`)
              })
            )
        }),
        scope
      )
      const closed = () => "closed"
      const queued: Array<number> = []
      const ask = (n: number) =>
        commit.request<string, string>((done) => {
          queued.push(n)
          return { n, done }
        }, closed)
      const first = yield* Effect.fork(ask(0))
      const waiting = yield* Effect.forEach([1, 2, 3], (n) => Effect.fork(ask(n)))
      while (queued.length < 4) yield* Effect.yieldNow()
      // A caller that stops waiting does not take its job back: it is written all the same.
      yield* Fiber.interrupt(waiting[2]!)
      assert.deepStrictEqual(written, [])
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual(yield* Fiber.join(first), "wrote 0")
      assert.strictEqual(yield* Fiber.join(waiting[0]!), "wrote 1")
      assert.deepStrictEqual(yield* Effect.flip(Fiber.join(waiting[1]!)), "refused 2")
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(written, [0, 1, 2, 3])
      assert.strictEqual(yield* Effect.flip(ask(4)), "closed")
      assert.deepStrictEqual(written, [0, 1, 2, 3])
    }))
})
