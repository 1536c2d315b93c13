import { assert, describe, it } from "@effect/vitest"
import { Context, DateTime, Effect, Exit, Fiber, Layer, Option, Scope, TestClock } from "effect"
import type { ExecutionTrace } from "../../src/domain/ExecutionTrace.js"
import { TraceStore } from "../../src/services/TraceStore.js"

const START = Date.parse("2026-04-22T10:00:00.000Z")

/** A closed turn of `session` that started at `at` (epoch milliseconds). */
export const closedTrace = (id: string, session: string, at: number, finalResponse: string | null = `answer ${id}`) =>
  ({
    trace_id: id,
    session_id: session,
    channel: "cli",
    started_at: DateTime.unsafeMake(at),
    finished_at: DateTime.unsafeMake(at + 1_000),
    user_message: `question ${id}`,
    steps: [],
    final_response: finalResponse,
    cost_usd: 0,
    wall_time_ms: 1_000,
    outcome: finalResponse === null ? "user_aborted" : "success",
    metadata: {}
  }) satisfies ExecutionTrace

/**
 * The TraceStore contract: what `persist` keeps, `get` and `list` give back, in the order persisted. `make` builds a fresh, empty store for each test (the clock is set first).
 */
export const traceStoreContract = (name: string, make: () => Layer.Layer<TraceStore, unknown>) =>
  describe(`TraceStore contract: ${name}`, () => {
    const withStore = <A, E>(f: (store: TraceStore["Type"]) => Effect.Effect<A, E>) =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        return yield* Effect.flatMap(TraceStore, f).pipe(Effect.provide(make()))
      })

    /** Persists `count` turns of `session`, one a minute, named `<prefix>-1`… */
    const persistTurns = (store: TraceStore["Type"], session: string, prefix: string, count: number, from = 1) =>
      Effect.forEach(
        Array.from({ length: count }, (_, i) => from + i),
        (n) => store.persist(closedTrace(`${prefix}-${n}`, session, START + n * 60_000)),
        { discard: true }
      )

    const sessionIds = (store: TraceStore["Type"], sessionId: string) =>
      Effect.map(store.list({ sessionId }), (listed) => listed.map((listing) => listing.trace_id))

    it.scoped("sessions are kept apart, however their turns interleave", () =>
      withStore((store) =>
        Effect.gen(function*() {
          for (let n = 1; n <= 4; n++) {
            yield* store.persist(closedTrace(`a-${n}`, "alice", START + n * 60_000))
            yield* store.persist(closedTrace(`b-${n}`, "bob", START + n * 60_000 + 1))
            if (n % 2 === 0) yield* store.persist(closedTrace(`c-${n}`, "carol", START + n * 60_000 + 2))
          }
          assert.deepStrictEqual(yield* sessionIds(store, "alice"), ["a-1", "a-2", "a-3", "a-4"])
          assert.deepStrictEqual(yield* sessionIds(store, "carol"), ["c-2", "c-4"])
          assert.deepStrictEqual(yield* sessionIds(store, "Alice"), [], "session ids are compared exactly")
        })
      ))

    it.scoped("a turn that ended without an answer is kept with a null response", () =>
      withStore((store) =>
        Effect.gen(function*() {
          yield* store.persist(closedTrace("a-2", "alice", START + 60_000, null))
          assert.isNull(Option.getOrThrow(yield* store.get("a-2")).final_response)
        })
      ))

    it.scoped("order is the order of persist, even when a turn that started earlier closes later", () =>
      withStore((store) =>
        Effect.gen(function*() {
          yield* store.persist(closedTrace("late", "alice", START + 10 * 60_000))
          yield* store.persist(closedTrace("early", "alice", START))
          assert.deepStrictEqual(yield* sessionIds(store, "alice"), ["late", "early"])
        })
      ))

    it.scoped("turns of several months are one listing", () =>
      withStore((store) =>
        Effect.gen(function*() {
          const may = Date.parse("2026-05-01T00:00:01.000Z")
          yield* store.persist(closedTrace("april", "alice", may - 2_000))
          yield* store.persist(closedTrace("may", "alice", may))
          assert.deepStrictEqual(yield* sessionIds(store, "alice"), ["april", "may"])
        })
      ))

    it.scoped("a closed store refuses persist with a TraceStoreError, at once: it never hangs", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const scope = yield* Scope.make()
        const store = Context.get(yield* Layer.buildWithScope(make(), scope), TraceStore)
        yield* store.persist(closedTrace("a-1", "alice", START))
        yield* Scope.close(scope, Exit.void)
        const fiber = yield* Effect.fork(Effect.flip(store.persist(closedTrace("a-2", "alice", START + 60_000))))
        yield* TestClock.adjust("1 hour")
        const error = yield* Fiber.join(fiber)
        assert.strictEqual(error._tag, "TraceStoreError")
      }))

    it.scoped("get finds a persisted trace by id, whole; list filters by session and start, in the order persisted", () =>
      withStore((store) =>
        Effect.gen(function*() {
          yield* persistTurns(store, "alice", "a", 3)
          yield* persistTurns(store, "bob", "b", 1, 2)
          const found = yield* store.get("a-2")
          assert.deepStrictEqual(Option.map(found, (trace) => trace.trace_id), Option.some("a-2"))
          assert.deepStrictEqual(Option.getOrThrow(found).user_message, "question a-2")
          assert.isTrue(Option.isNone(yield* store.get("nobody")))
          const all = yield* store.list({})
          assert.deepStrictEqual(all.map((listing) => listing.trace_id), ["a-1", "a-2", "a-3", "b-2"])
          const alice = yield* store.list({ sessionId: "alice", since: START + 2 * 60_000 })
          assert.deepStrictEqual(alice.map((listing) => listing.trace_id), ["a-2", "a-3"])
          assert.deepStrictEqual((yield* store.list({ limit: 1 })).map((listing) => listing.trace_id), ["b-2"])
          assert.deepStrictEqual(yield* store.list({ limit: 0 }), [])
        })
      ))
  })
