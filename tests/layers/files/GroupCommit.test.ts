import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Scope } from "effect"
import { makeGroupCommit, type Reply } from "../../../src/layers/files/GroupCommit.js"

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

  it.effect("a request waits for the batch that writes its job, its first reply counts; after the close it fails with `closed`", () =>
    Effect.gen(function*() {
      interface Job {
        readonly n: number
        readonly done: Reply<string, string>
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
              Effect.sync(() => {
                for (const job of jobs) {
                  written.push(job.n)
                  job.done(job.n === 2 ? Exit.fail("refused 2") : Exit.succeed(`wrote ${job.n}`))
                  // A second reply is ignored: the caller has already resumed with the first.
                  job.done(Exit.succeed("replied twice"))
                }
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

  it.effect("a batch takes at most maxBatch jobs, in the order they were queued", () =>
    Effect.gen(function*() {
      const batches: Array<ReadonlyArray<number>> = []
      const gate = yield* Deferred.make<void>()
      let started = false
      const scope = yield* Scope.make()
      const commit = yield* Scope.extend(
        makeGroupCommit<number>({
          maxBatch: 2,
          // The first batch waits for the gate, so that the next jobs are all queued when the writer comes back.
          step: (jobs) =>
            Effect.zipRight(
              jobs[0] === 0 ? Effect.zipRight(Effect.sync(() => (started = true)), Deferred.await(gate)) : Effect.void,
              Effect.sync(() => batches.push(jobs))
            )
        }),
        scope
      )
      yield* commit.offer(0)
      while (!started) yield* Effect.yieldNow()
      for (let i = 1; i < 6; i++) yield* commit.offer(i)
      yield* Deferred.succeed(gate, undefined)
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(batches, [[0], [1, 2], [3, 4], [5]])
    }))

  it.effect("jobs queued while the close is writing are written too; the shutdown runs after the last one", () =>
    Effect.gen(function*() {
      const written: Array<string> = []
      const scope = yield* Scope.make()
      let commit: { readonly offer: (job: string) => Effect.Effect<boolean> } | undefined
      const made = yield* Scope.extend(
        makeGroupCommit<string>({
          // Writing the first job queues another, as a turn that ends during the shutdown would.
          step: (jobs) =>
            Effect.flatMap(
              Effect.sync(() => written.push(...jobs)),
              () => jobs.includes("first") ? Effect.asVoid(commit!.offer("late")) : Effect.void
            ),
          shutdown: Effect.sync(() => written.push("shutdown"))
        }),
        scope
      )
      commit = made
      yield* made.offer("first")
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(written, ["first", "late", "shutdown"])
      assert.isFalse(yield* made.offer("after"))
    }))
})
