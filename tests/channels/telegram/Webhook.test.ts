import { HttpClient, HttpClientRequest } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { TelegramLive } from "../../../src/channels/telegram/Live.js"
import { RecordedTraces } from "../../../src/layers/traces/TraceStoreMemory.js"
import { Loopback, serve } from "../../http/support.js"
import { FakeBotApi, OWNER, textMessage, TOKEN } from "./FakeBotApi.js"
import { telegramGraph, textOf } from "./support.js"

const SECRET = "webhook-secret_42"

const webhookGraph = Layer.merge(
  telegramGraph({
    telegram: { webhook: { url: "https://myclaw.example/telegram/webhook" } },
    script: [{ text: "Hello!" }, { text: "Again!" }]
  }),
  Loopback
)

const startWebhook = (fake: FakeBotApi, env: Record<string, string>) =>
  Layer.build(TelegramLive).pipe(
    Effect.withConfigProvider(ConfigProvider.fromJson({
      TELEGRAM_BOT_TOKEN: TOKEN,
      MYCLAW_TELEGRAM_API_ROOT: fake.apiRoot,
      ...env
    }))
  )

const postUpdate = (update: unknown, secret: string | undefined) => {
  const request = HttpClientRequest.post("/telegram/webhook").pipe(
    HttpClientRequest.bodyText(JSON.stringify(update), "application/json")
  )
  return HttpClient.execute(
    secret === undefined
      ? request
      : request.pipe(HttpClientRequest.setHeader("x-telegram-bot-api-secret-token", secret))
  )
}

describe("Telegram channel: webhook mode", () => {
  it.scoped("the webhook is set with the secret; posts need it; an update redelivered is handled once; no polling", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      const context = yield* startWebhook(fake, { TELEGRAM_WEBHOOK_SECRET: SECRET })
      yield* serve().pipe(Effect.provide(context))
      const set = fake.sent("setWebhook")
      assert.strictEqual(set.length, 1)
      assert.strictEqual(set[0]!.payload.url, "https://myclaw.example/telegram/webhook")
      assert.strictEqual(set[0]!.payload.secret_token, SECRET)
      const update = { update_id: 7001, ...textMessage(OWNER, "hello") }
      for (const wrong of [undefined, "nope", `${SECRET}x`]) {
        assert.strictEqual((yield* postUpdate(update, wrong)).status, 401)
      }
      assert.strictEqual((yield* postUpdate(update, SECRET)).status, 200)
      const answer = yield* fake.awaitCall((call) => call.method === "sendMessage")
      assert.strictEqual(textOf(answer.payload), "Hello!")
      assert.strictEqual((yield* postUpdate(update, SECRET)).status, 200)
      assert.strictEqual(
        (yield* postUpdate({ update_id: 7002, ...textMessage(OWNER, "again", 2) }, SECRET)).status,
        200
      )
      yield* fake.awaitCall((call) => call.method === "sendMessage", 2)
      const traces = yield* (yield* RecordedTraces).all
      assert.deepStrictEqual(traces.map((trace) => trace.user_message), ["hello", "again"])
      assert.deepStrictEqual(fake.sent("sendMessage").map((call) => textOf(call.payload)), ["Hello!", "Again!"])
      assert.deepStrictEqual(fake.sent("getUpdates"), [])
    }).pipe(Effect.provide(webhookGraph)))

  it.scoped("webhook mode without its secret token in the environment does not start", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      const error = yield* Effect.flip(startWebhook(fake, {}))
      assert.strictEqual(error._tag, "ConfigFileError")
      assert.include(error.message, "TELEGRAM_WEBHOOK_SECRET")
      assert.deepStrictEqual(fake.calls, [])
    }).pipe(Effect.provide(webhookGraph)))
})
