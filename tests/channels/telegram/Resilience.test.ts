import { assert, describe, it } from "@effect/vitest"
import { Chunk, Clock, Effect, TestClock } from "effect"
import { readFileSync } from "node:fs"
import { RecordedTraces } from "../../../src/layers/traces/TraceStoreMemory.js"
import { FakeBotApi, OWNER, textMessage } from "./FakeBotApi.js"
import { startBot, telegramGraph, textOf } from "./support.js"

const fixture = (file: string) =>
  JSON.parse(readFileSync(new URL(`../../fixtures/telegram/${file}`, import.meta.url), "utf8")) as Record<
    string,
    unknown
  >

/** Lets the event loop run (real I/O), without any timer. */
const tick = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

describe("Telegram channel: long answers, rate limits, failures", () => {
  const long = `${"a".repeat(3000)}\n\n${"b".repeat(1998)}`
  it.scoped("a 5,000-character answer arrives as two messages under the limit, nothing lost", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      fake.push(textMessage(OWNER, "write a lot"))
      yield* fake.awaitCall((call) => call.method === "sendMessage", 2)
      const parts = fake.sent("sendMessage").map((call) => textOf(call.payload))
      assert.strictEqual(long.length, 5000)
      assert.strictEqual(parts.length, 2)
      assert.isTrue(parts.every((part) => part.length <= 4096))
      assert.strictEqual(parts.join(""), long)
      assert.strictEqual(parts[1], "b".repeat(1998))
    }).pipe(Effect.provide(telegramGraph({ script: [{ text: long }] }))))

  const gap = `first${"\n".repeat(10_000)}second`
  it.scoped("a long run of blank lines (a model stuck on newlines) sends no blank message, and loses no text", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      fake.push(textMessage(OWNER, "two things"))
      yield* fake.awaitCall((call) => call.method === "sendMessage" && textOf(call.payload).includes("second"))
      const parts = fake.sent("sendMessage").map((call) => textOf(call.payload))
      assert.isTrue(parts.every((part) => part.trim() !== "" && part.length <= 4096))
      assert.strictEqual(parts.join("").replaceAll("\n", ""), "firstsecond")
    }).pipe(Effect.provide(telegramGraph({ script: [{ text: gap }] }))))

  it.scoped("an answer holding half of an emoji (a model's broken output) still arrives, that half as U+FFFD", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      fake.push(textMessage(OWNER, "hello"))
      const sent = yield* fake.awaitCall((call) =>
        call.method === "sendMessage" && textOf(call.payload).startsWith("Hi")
      )
      assert.strictEqual(textOf(sent.payload), "Hi \ufffd there")
    }).pipe(Effect.provide(telegramGraph({ script: [{ text: "Hi \ud83d there" }] }))))

  const huge = Array.from({ length: 25 }, (_, i) => `${String(i).padStart(2, "0")}${"x".repeat(4000)}`).join("\n\n")
  it.scoped("sends to one chat are paced: a burst of 20 (the typing action included), then one a second", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      fake.push(textMessage(OWNER, "write a book"))
      yield* fake.awaitCall((call) => call.method === "sendMessage", 19)
      const now = yield* Clock.currentTimeMillis
      while (!Chunk.toReadonlyArray(yield* TestClock.sleeps()).includes(now + 1000)) yield* tick
      assert.strictEqual(fake.sent("sendMessage").length, 19)
      assert.strictEqual(fake.sent("sendChatAction").length, 1)
      for (let sent = 20; sent <= 25; sent++) {
        yield* TestClock.adjust("1 second")
        yield* fake.awaitCall((call) => call.method === "sendMessage", sent)
      }
      const parts = fake.sent("sendMessage").map((call) => textOf(call.payload))
      assert.strictEqual(parts.join(""), huge)
      assert.isTrue(parts.every((part, i) => part.startsWith(String(i).padStart(2, "0"))))
    }).pipe(Effect.provide(telegramGraph({ script: [{ text: huge }] }))))

  it.scoped("a 429 is honoured: the send waits exactly its retry_after, then goes through", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      const body = fixture("error-429-retry-after-parameters.json")
      fake.failNext("sendMessage", 429, body)
      yield* startBot(fake)
      fake.push(textMessage(OWNER, "hello"))
      yield* fake.awaitCall((call) => call.method === "sendMessage")
      const now = yield* Clock.currentTimeMillis
      const due = now + 2282 * 1000
      while (!Chunk.toReadonlyArray(yield* TestClock.sleeps()).includes(due)) yield* tick
      yield* TestClock.adjust("2281 seconds")
      yield* tick
      assert.strictEqual(fake.sent("sendMessage").length, 1)
      yield* TestClock.adjust("1 second")
      const retried = yield* fake.awaitCall((call) => call.method === "sendMessage", 2)
      assert.strictEqual(textOf(retried.payload), "Hello!")
      assert.strictEqual(retried.payload.chat_id, OWNER.id)
    }).pipe(Effect.provide(telegramGraph({ script: [{ text: "Hello!" }] }))))

  it.scoped("a network or server failure is retried with backoff, and the answer still arrives once", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      fake.failNext("sendMessage", 502, { ok: false, error_code: 502, description: "Bad Gateway" })
      fake.failNext("sendMessage", 500, { ok: false, error_code: 500, description: "Internal Server Error" })
      yield* startBot(fake)
      fake.push(textMessage(OWNER, "hello"))
      yield* fake.awaitCall((call) => call.method === "sendMessage")
      const now = yield* Clock.currentTimeMillis
      while (!Chunk.toReadonlyArray(yield* TestClock.sleeps()).includes(now + 1000)) yield* tick
      yield* TestClock.adjust("1 second")
      yield* fake.awaitCall((call) => call.method === "sendMessage", 2)
      while (!Chunk.toReadonlyArray(yield* TestClock.sleeps()).includes(now + 3000)) yield* tick
      yield* TestClock.adjust("2 seconds")
      const delivered = yield* fake.awaitCall((call) => call.method === "sendMessage", 3)
      assert.strictEqual(textOf(delivered.payload), "Hello!")
    }).pipe(Effect.provide(telegramGraph({ script: [{ text: "Hello!" }] }))))

  it.scoped("a chat that blocked the bot (403) is not retried, and the bot goes on with the next message", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      fake.failNext("sendMessage", 403, fixture("error-403-bot-blocked.json"))
      yield* startBot(fake)
      fake.push(textMessage(OWNER, "one", 1))
      yield* fake.awaitCall((call) => call.method === "sendMessage")
      fake.push(textMessage(OWNER, "two", 2))
      const second = yield* fake.awaitCall((call) => call.method === "sendMessage", 2)
      assert.strictEqual(textOf(second.payload), "second")
      assert.deepStrictEqual(fake.sent("sendMessage").map((call) => textOf(call.payload)), ["first", "second"])
      const traces = yield* (yield* RecordedTraces).all
      assert.deepStrictEqual(traces.map((trace) => trace.outcome), ["success", "success"])
    }).pipe(Effect.provide(telegramGraph({ script: [{ text: "first" }, { text: "second" }] }))))
})
