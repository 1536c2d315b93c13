import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { OwnerNoticesLive } from "../../../src/layers/OwnerNoticesLive.js"
import { DigestScheduleLive } from "../../../src/programs/Digest.js"
import { FakeBotApi, OWNER } from "./FakeBotApi.js"
import { startBot, telegramGraph, textOf } from "./support.js"

describe("Telegram channel: the daily digest", () => {
  it.scoped("comes to the owner's chat at digest.dailyAt, as `serve` wires it", () =>
    Effect.gen(function*() {
      // The clock is set before the layer that forks the schedule is built.
      yield* TestClock.setTime(Date.parse("2026-04-22T21:59:00.000Z"))
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      yield* Layer.build(DigestScheduleLive)
      yield* TestClock.adjust("1 minute")
      const sent = yield* fake.awaitCall((call) => call.method === "sendMessage")
      assert.strictEqual(sent.payload.chat_id, OWNER.id)
      assert.match(textOf(sent.payload), /^myclaw · digest · 2026-04-22\n/)
    }).pipe(Effect.provide(Layer.merge(telegramGraph({ script: [] }), OwnerNoticesLive))))
})
