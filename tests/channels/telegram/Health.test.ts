import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { ChannelStatesLive } from "../../../src/layers/ChannelStatesLive.js"
import { get, Loopback, serve } from "../../http/support.js"
import { FakeBotApi, OWNER, textMessage } from "./FakeBotApi.js"
import { startBot, telegramGraph } from "./support.js"

interface Report {
  readonly status: string
  readonly channels: Record<string, string>
  readonly problems: ReadonlyArray<string>
}

const health = Effect.flatMap(get("/health"), (response) => response.json).pipe(
  Effect.map((json) => json as unknown as Report),
  Effect.orDie
)

/** /health once the Telegram channel reports `state` (its I/O completes on Node's threads). */
const healthWhen = (state: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 2000; i++) {
      const report = yield* health
      if (report.channels.telegram === state) return report
      yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
    }
    return yield* health
  })

const refused = (code: number, description: string) => ({ ok: false, error_code: code, description })

describe("Telegram channel: its state in /health", () => {
  it.scoped("a token Telegram refuses makes /health degraded, naming the variable; polling again clears it", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      fake.failNext("deleteWebhook", 401, refused(401, "Unauthorized"))
      fake.failNext("getUpdates", 401, refused(401, "Unauthorized"))
      yield* startBot(fake)
      yield* serve()
      const failing = yield* healthWhen("failing")
      assert.strictEqual(failing.channels.telegram, "failing")
      assert.notStrictEqual(failing.status, "ok")
      const problem = failing.problems.find((line) => line.includes("Telegram"))
      assert.include(problem, "TELEGRAM_BOT_TOKEN")
      // The token is fixed (here: Telegram answers again): the next poll works.
      yield* TestClock.adjust("1 second")
      fake.push(textMessage(OWNER, "hello", 1))
      const polling = yield* healthWhen("polling")
      assert.strictEqual(polling.channels.telegram, "polling")
      assert.isFalse(polling.problems.some((line) => line.includes("Telegram")))
    }).pipe(Effect.provide(Layer.mergeAll(telegramGraph({ script: [{ text: "hi" }] }), Loopback, ChannelStatesLive))))

  it.scoped("another process polling the same bot (409) is named as such", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      fake.failNext(
        "getUpdates",
        409,
        refused(
          409,
          "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
        )
      )
      yield* startBot(fake)
      yield* serve()
      const failing = yield* healthWhen("failing")
      assert.include(failing.problems.find((line) => line.includes("Telegram")), "another process")
    }).pipe(Effect.provide(Layer.mergeAll(telegramGraph({ script: [] }), Loopback, ChannelStatesLive))))
})
