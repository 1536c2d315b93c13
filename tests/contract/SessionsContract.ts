import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import type { Layer } from "effect"
import type { NewSessionTurn } from "../../src/domain/Session.js"
import { Sessions } from "../../src/services/Sessions.js"

export const turnOf = (sessionId: string, n: number, overrides: Partial<NewSessionTurn> = {}): NewSessionTurn => ({
  sessionId,
  owner: "cli:alice",
  traceId: `trace-${n}`,
  userMessage: `question ${n}`,
  finalResponse: `answer ${n}`,
  at: 1_000 * n,
  promptTokens: 100,
  cachedTokens: 80,
  responseTokens: 10,
  taintedBy: [],
  answeredAt: null,
  ...overrides
})

/**
 * The Sessions contract: every implementation keeps the same turns, summaries and owners. `make` builds a fresh,
 * empty store per test.
 */
export const sessionsContract = (name: string, make: () => Layer.Layer<Sessions, unknown>) =>
  describe(`Sessions contract: ${name}`, () => {
    const run = <A, E>(effect: Effect.Effect<A, E, Sessions>) => Effect.provide(effect, make())

    it.scoped("a new session has no history; turns come back in order with their fields", () =>
      run(Effect.gen(function*() {
        const sessions = yield* Sessions
        assert.deepStrictEqual(yield* sessions.history("s1", "cli:alice"), { summary: null, turns: [] })
        yield* sessions.recordTurn(turnOf("s1", 1))
        yield* sessions.recordTurn(turnOf("s1", 2, { finalResponse: null, taintedBy: ["web:x"], answeredAt: "t" }))
        const history = yield* sessions.history("s1", "cli:alice")
        assert.deepStrictEqual(history.turns.map((turn) => turn.seq), [1, 2])
        assert.deepStrictEqual(history.turns[1], {
          seq: 2,
          trace_id: "trace-2",
          user_message: "question 2",
          final_response: null,
          at: 2_000,
          prompt_tokens: 100,
          cached_tokens: 80,
          response_tokens: 10,
          tainted_by: ["web:x"],
          answered_at: "t"
        })
        assert.deepStrictEqual((yield* sessions.history("s2", "cli:alice")).turns, [])
      })))

    it.scoped("a session belongs to its first owner: another owner can neither read nor continue it", () =>
      run(Effect.gen(function*() {
        const sessions = yield* Sessions
        yield* sessions.recordTurn(turnOf("s1", 1))
        const read = yield* Effect.flip(sessions.history("s1", "telegram:@mallory"))
        assert.strictEqual(read.reason, "Forbidden")
        const write = yield* Effect.flip(sessions.recordTurn(turnOf("s1", 2, { owner: "telegram:@mallory" })))
        assert.strictEqual(write.reason, "Forbidden")
        assert.strictEqual((yield* sessions.history("s1", "cli:alice")).turns.length, 1)
        // The refused turn left no trace on the session either: not its last activity, not its turn count.
        assert.deepInclude(Option.getOrThrow(yield* sessions.show("s1")).info, {
          owner: "cli:alice",
          last_active_at: 1_000,
          turns: 1
        })
        // A turn recorded late (an older time) does not move the last activity back; it is still numbered next.
        yield* sessions.recordTurn(turnOf("s1", 3))
        yield* sessions.recordTurn(turnOf("s1", 4, { at: 500 }))
        const shown = Option.getOrThrow(yield* sessions.show("s1"))
        assert.deepInclude(shown.info, { last_active_at: 3_000, turns: 3 })
        assert.deepStrictEqual(shown.turns.map((turn) => [turn.seq, turn.trace_id]), [
          [1, "trace-1"],
          [2, "trace-3"],
          [3, "trace-4"]
        ])
      })))

    it.scoped("a turn recorded twice (added back from its trace while its record waited) is there once", () =>
      run(Effect.gen(function*() {
        const sessions = yield* Sessions
        yield* sessions.recordTurn(turnOf("s1", 1))
        yield* sessions.recordTurn(turnOf("s1", 2))
        yield* sessions.recordTurn(turnOf("s1", 1))
        const history = yield* sessions.history("s1", "cli:alice")
        assert.deepStrictEqual(history.turns.map((turn) => [turn.seq, turn.trace_id]), [[1, "trace-1"], [2, "trace-2"]])
        assert.deepStrictEqual(yield* sessions.unrecorded([{ sessionId: "s1", traceId: "trace-2", startedAt: 0 }]), [])
      })))

    it.scoped("turns closing at once are all recorded, in order per session; another owner's is refused alone", () =>
      run(Effect.gen(function*() {
        const sessions = yield* Sessions
        yield* sessions.recordTurn(turnOf("s1", 1))
        const turns = [
          turnOf("s2", 2),
          turnOf("s1", 3, { owner: "telegram:@mallory" }),
          turnOf("s3", 4),
          turnOf("s2", 5),
          turnOf("s1", 6)
        ]
        const outcomes = yield* Effect.forEach(turns, (turn) => Effect.either(sessions.recordTurn(turn)), {
          concurrency: "unbounded"
        })
        assert.deepStrictEqual(
          outcomes.map((outcome) => outcome._tag === "Left" ? outcome.left.reason : "recorded"),
          ["recorded", "Forbidden", "recorded", "recorded", "recorded"]
        )
        const traces = (sessionId: string) =>
          Effect.map(
            sessions.history(sessionId, "cli:alice"),
            (history) => history.turns.map((turn) => [turn.seq, turn.trace_id])
          )
        assert.deepStrictEqual(yield* traces("s1"), [[1, "trace-1"], [2, "trace-6"]])
        assert.deepStrictEqual(yield* traces("s2"), [[1, "trace-2"], [2, "trace-5"]])
        assert.deepStrictEqual(yield* traces("s3"), [[1, "trace-4"]])
      })))

    it.scoped("the newest summary replaces the turns it covers; the turns stay stored", () =>
      run(Effect.gen(function*() {
        const sessions = yield* Sessions
        for (let n = 1; n <= 8; n++) yield* sessions.recordTurn(turnOf("s1", n))
        yield* sessions.addSummary("s1", { covers_through: 3, text: "first", at: 9_000, tainted_by: [] })
        yield* sessions.addSummary("s1", { covers_through: 5, text: "second", at: 9_500, tainted_by: ["web:x"] })
        const history = yield* sessions.history("s1", "cli:alice")
        assert.strictEqual(history.summary?.text, "second")
        assert.deepStrictEqual(history.summary?.tainted_by, ["web:x"])
        assert.deepStrictEqual(history.turns.map((turn) => turn.seq), [6, 7, 8])
        const shown = Option.getOrThrow(yield* sessions.show("s1"))
        assert.strictEqual(shown.turns.length, 8)
        assert.deepStrictEqual(shown.summaries.map((summary) => summary.text), ["first", "second"])
        assert.deepInclude(shown.info, { id: "s1", channel: "cli", owner: "cli:alice", turns: 8, summaries: 2 })
      })))

    it.scoped("list: most recently active first, with created and last-active times", () =>
      run(Effect.gen(function*() {
        const sessions = yield* Sessions
        yield* sessions.recordTurn(turnOf("a", 1))
        yield* sessions.recordTurn(turnOf("b", 2, { owner: "telegram:@bob" }))
        yield* sessions.recordTurn(turnOf("a", 3))
        const listed = yield* sessions.list
        assert.deepStrictEqual(listed.map((info) => [info.id, info.created_at, info.last_active_at, info.turns]), [
          ["a", 1_000, 3_000, 2],
          ["b", 2_000, 2_000, 1]
        ])
        assert.strictEqual(listed[1]!.channel, "telegram")
      })))

    it.scoped("startNew opens an empty session owned by the caller, with a fresh id", () =>
      run(Effect.gen(function*() {
        const sessions = yield* Sessions
        const first = yield* sessions.startNew("telegram", "telegram:@alice")
        const second = yield* sessions.startNew("telegram", "telegram:@alice")
        assert.notStrictEqual(first, second)
        assert.isTrue(first.startsWith("telegram-"))
        assert.deepStrictEqual(yield* sessions.history(first, "telegram:@alice"), { summary: null, turns: [] })
        assert.strictEqual((yield* Effect.flip(sessions.history(first, "cli:alice"))).reason, "Forbidden")
      })))

    it.scoped("forget deletes the turns and summaries; the owner stays; an unknown session is NotFound", () =>
      run(Effect.gen(function*() {
        const sessions = yield* Sessions
        for (let n = 1; n <= 3; n++) yield* sessions.recordTurn(turnOf("s1", n))
        yield* sessions.addSummary("s1", { covers_through: 2, text: "old", at: 5_000, tainted_by: [] })
        assert.strictEqual(yield* sessions.forget("s1"), 3)
        assert.deepStrictEqual(yield* sessions.history("s1", "cli:alice"), { summary: null, turns: [] })
        assert.deepInclude(Option.getOrThrow(yield* sessions.show("s1")).info, { turns: 0, summaries: 0 })
        assert.strictEqual((yield* Effect.flip(sessions.history("s1", "cli:bob"))).reason, "Forbidden")
        assert.strictEqual((yield* Effect.flip(sessions.forget("nope"))).reason, "NotFound")
      })))

    it.scoped("unrecorded names the turns not in their sessions, except those of a session forgotten since", () =>
      run(Effect.gen(function*() {
        const sessions = yield* Sessions
        yield* sessions.recordTurn(turnOf("s1", 1))
        yield* sessions.recordTurn(turnOf("s2", 2))
        yield* TestClock.setTime(10_000)
        assert.strictEqual(yield* sessions.forget("s2"), 1)
        const candidates = [
          { sessionId: "s1", traceId: "trace-1", startedAt: 500 },
          { sessionId: "s1", traceId: "trace-3", startedAt: 3_000 },
          { sessionId: "s2", traceId: "trace-2", startedAt: 1_500 },
          { sessionId: "s2", traceId: "trace-4", startedAt: 10_000 },
          { sessionId: "s2", traceId: "trace-5", startedAt: 10_001 },
          { sessionId: "s9", traceId: "trace-6", startedAt: 6_000 }
        ]
        assert.deepStrictEqual(yield* sessions.unrecorded(candidates), ["trace-3", "trace-5", "trace-6"])
      })))
  })
