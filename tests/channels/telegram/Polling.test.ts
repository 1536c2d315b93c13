import { assert, describe, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { RecordedTraces } from "../../../src/layers/traces/TraceStoreMemory.js"
import { probeTools } from "../../contract/fixtures.js"
import { FakeBotApi, OWNER, textMessage } from "./FakeBotApi.js"
import { captureLogs, startBot, telegramGraph, textOf } from "./support.js"

describe("Telegram channel: polling", () => {
  const probe = probeTools.make()
  it.scoped("a stalled getUpdates is detected while other calls still work; polling restarts, no update lost or repeated", () => {
    const logs = captureLogs()
    return Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      const first = fake.push(textMessage(OWNER, "one", 1))
      yield* probe.started
      yield* fake.awaitCall((call) => call.method === "getUpdates" && call.payload.offset === first + 1)
      fake.stallGetUpdates = true
      // Other traffic during the stall: the first turn finishes and its answer is sent.
      yield* TestClock.adjust("10 seconds")
      const answer = yield* fake.awaitCall((call) => call.method === "sendMessage")
      assert.strictEqual(textOf(answer.payload), "one done")
      const second = fake.push(textMessage(OWNER, "two", 2))
      assert.isFalse(logs.lines.some((line) => line.includes("restarting polling")))
      fake.stallGetUpdates = false
      yield* TestClock.adjust("50 seconds")
      const answer2 = yield* fake.awaitCall((call) => call.method === "sendMessage", 2)
      assert.strictEqual(textOf(answer2.payload), "two done")
      assert.isTrue(logs.lines.some((line) => line.includes("getUpdates has not returned for 1m: restarting polling")))
      yield* fake.awaitCall((call) => call.method === "getUpdates" && call.payload.offset === second + 1)
      assert.deepStrictEqual(fake.offsets, [undefined, first + 1, first + 1, second + 1])
      const traces = yield* (yield* RecordedTraces).all
      assert.deepStrictEqual(traces.map((trace) => trace.user_message), ["one", "two"])
    }).pipe(
      Effect.provide(telegramGraph({
        tools: probe.tools,
        script: [{ toolCalls: [{ name: "slow", args: {} }] }, { text: "one done" }, { text: "two done" }]
      })),
      Effect.provide(logs.layer)
    )
  })

  it.scoped("after an outage polling resumes from the same offset: nothing lost, nothing repeated", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      const badGateway = { ok: false, error_code: 502, description: "Bad Gateway" }
      fake.failNext("getUpdates", 502, badGateway)
      yield* startBot(fake)
      const first = fake.push(textMessage(OWNER, "one", 1))
      yield* fake.awaitCall((call) => call.method === "getUpdates")
      yield* TestClock.adjust("1 second")
      yield* fake.awaitCall((call) => call.method === "sendMessage")
      // The next poll (after the one held now) fails, the one after resumes.
      fake.failNext("getUpdates", 502, badGateway)
      const second = fake.push(textMessage(OWNER, "two", 2))
      yield* fake.awaitCall((call) => call.method === "getUpdates", 4)
      yield* TestClock.adjust("1 second")
      yield* fake.awaitCall((call) => call.method === "getUpdates", 5)
      const third = fake.push(textMessage(OWNER, "three", 3))
      yield* fake.awaitCall((call) => call.method === "sendMessage", 3)
      yield* fake.awaitCall((call) => call.method === "getUpdates" && call.payload.offset === third + 1)
      assert.deepStrictEqual(fake.offsets.slice(0, 6), [
        undefined,
        undefined,
        first + 1,
        second + 1,
        second + 1,
        third + 1
      ])
      const traces = yield* (yield* RecordedTraces).all
      assert.deepStrictEqual(traces.map((trace) => trace.user_message), ["one", "two", "three"])
    }).pipe(Effect.provide(telegramGraph({ script: [{ text: "1" }, { text: "2" }, { text: "3" }] }))))
})
