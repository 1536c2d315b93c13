import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Logger, Schema } from "effect"
import { decodeTrace, type ExecutionTrace } from "../../src/domain/ExecutionTrace.js"
import type { LlmRequest } from "../../src/domain/LlmTypes.js"
import type { ScriptEntry } from "../../src/domain/ScriptEntry.js"
import { defineTool } from "../../src/domain/Tool.js"
import { LlmFunction } from "../../src/layers/llm/LlmScripted.js"
import { RecordedTraces } from "../../src/layers/traces/TraceStoreMemory.js"
import { Loopback, postJson, serve, ServedGraph, TOKEN } from "./support.js"

/**
 * A model that holds the turn asking "hold" in a tool until released, answers every other message at once, and
 * tells what it was asked; a log watcher that tells when a turn waits for its session.
 */
const makeWorld = () => {
  const entered = Effect.runSync(Deferred.make<void>())
  const release = Effect.runSync(Deferred.make<void>())
  /** Settled by the first of: a turn waiting for its session (`queued`), or the model asked while one is held. */
  let signal = Effect.runSync(Deferred.make<"queued" | "ran alongside">())
  let held = false
  const asked: Array<ReadonlyArray<string>> = []
  const userMessages = (request: LlmRequest) =>
    request.messages.flatMap((message) => message.role === "user" ? [message.content] : [])
  const answer = (request: LlmRequest): ScriptEntry => {
    const last = request.messages.at(-1)
    const said = userMessages(request)
    if (last?.role === "tool") return { text: "held and done" }
    asked.push(said)
    if (said.at(-1)?.endsWith("hold") === true) return { toolCalls: [{ name: "hold", args: {} }] }
    if (held) Effect.runSync(Deferred.succeed(signal, "ran alongside"))
    return { text: `answered: ${said.at(-1)}` }
  }
  const hold = defineTool({
    name: "hold",
    description: "Holds the turn until the test releases it.",
    parameters: Schema.Struct({}),
    hasSideEffects: false,
    external: false,
    execute: () =>
      Effect.sync(() => {
        held = true
      }).pipe(
        Effect.zipRight(Deferred.succeed(entered, undefined)),
        Effect.zipRight(Deferred.await(release)),
        Effect.ensuring(Effect.sync(() => {
          held = false
        })),
        Effect.as({ status: "success" as const, content: "released" })
      )
  })
  const watcher = Logger.add(Logger.make(({ message }) => {
    const text = Array.isArray(message) ? message.join(" ") : String(message)
    if (text.includes("waits for the turn before it")) Effect.runSync(Deferred.succeed(signal, "queued"))
  }))
  const layer = Layer.merge(
    ServedGraph({ llm: LlmFunction(answer), tools: [hold], config: { timeouts: { toolMs: 600_000 } } }),
    Loopback
  ).pipe(Layer.provideMerge(watcher))
  /** Waits for the next signal, then arms a fresh one. */
  const nextSignal = Effect.suspend(() => Deferred.await(signal)).pipe(
    Effect.tap(() =>
      Effect.sync(() => {
        signal = Effect.runSync(Deferred.make())
      })
    )
  )
  return { layer, entered: Deferred.await(entered), release: Deferred.succeed(release, undefined), asked, nextSignal }
}

const turn = (message: string, session_id: string) =>
  postJson("/v1/turns", { message, session_id }, TOKEN).pipe(
    Effect.flatMap((response) => response.json),
    Effect.flatMap(decodeTrace),
    Effect.orDie
  )

const started = (trace: ExecutionTrace) => trace.started_at.epochMillis
const finished = (trace: ExecutionTrace) => trace.finished_at?.epochMillis ?? Infinity

describe("POST /v1/turns of one session", () => {
  it.scoped("run one after the other, in the order sent: each sees the turns before it", () => {
    const world = makeWorld()
    return Effect.gen(function*() {
      yield* serve()
      const first = yield* Effect.fork(turn("please hold", "s-order"))
      yield* world.entered
      const second = yield* Effect.fork(turn("second", "s-order"))
      assert.strictEqual(yield* world.nextSignal, "queued", "the second turn ran beside the first")
      const third = yield* Effect.fork(turn("third", "s-order"))
      assert.strictEqual(yield* world.nextSignal, "queued")
      yield* world.release
      const [a, b, c] = [yield* Fiber.join(first), yield* Fiber.join(second), yield* Fiber.join(third)]
      assert.deepStrictEqual([a.outcome, b.outcome, c.outcome], ["success", "success", "success"])
      assert.deepStrictEqual(world.asked, [
        ["please hold"],
        ["please hold", "second"],
        ["please hold", "second", "third"]
      ])
      assert.isAtLeast(started(b), finished(a))
      assert.isAtLeast(started(c), finished(b))
      assert.strictEqual(c.final_response, "answered: third")
    }).pipe(Effect.provide(world.layer))
  })

  it.scoped("a turn of another session does not wait", () => {
    const world = makeWorld()
    return Effect.gen(function*() {
      yield* serve()
      const first = yield* Effect.fork(turn("please hold", "s-busy"))
      yield* world.entered
      const other = yield* turn("elsewhere", "s-free")
      assert.strictEqual(other.final_response, "answered: elsewhere")
      yield* world.release
      assert.strictEqual((yield* Fiber.join(first)).outcome, "success")
    }).pipe(Effect.provide(world.layer))
  })

  it.scoped("/stop and /status are answered at once: /stop ends the running turn, the waiting one then runs", () => {
    const world = makeWorld()
    return Effect.gen(function*() {
      yield* serve()
      const first = yield* Effect.fork(turn("please hold", "s-stop"))
      yield* world.entered
      const second = yield* Effect.fork(turn("after the stop", "s-stop"))
      assert.strictEqual(yield* world.nextSignal, "queued")
      const status = yield* turn("/status", "s-stop")
      assert.include(status.final_response ?? "", "running turns: 1")
      const stop = yield* turn("/stop", "s-stop")
      assert.strictEqual(stop.final_response, "Stopped 1 turn(s).")
      assert.strictEqual((yield* Fiber.join(first)).outcome, "user_aborted")
      const next = yield* Fiber.join(second)
      assert.strictEqual(next.final_response, "answered: after the stop")
      const recorded = yield* (yield* RecordedTraces).all
      assert.strictEqual(recorded.length, 4)
    }).pipe(Effect.provide(world.layer))
  })
})
