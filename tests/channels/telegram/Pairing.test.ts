import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Redacted, Schema } from "effect"
import { startTelegramPolling } from "../../../src/channels/telegram/Channel.js"
import { TelegramConfig } from "../../../src/domain/TelegramConfig.js"
import { ApprovalRouter } from "../../../src/services/ApprovalRouter.js"
import { Workspace } from "../../../src/services/Workspace.js"
import { probeTools } from "../../contract/fixtures.js"
import { FakeBotApi, OWNER, STRANGER, textMessage, TOKEN } from "./FakeBotApi.js"
import { telegramGraph, textOf } from "./support.js"

const textsTo = (fake: FakeBotApi, chatId: number) =>
  fake.sent("sendMessage").filter((call) => call.payload.chat_id === chatId).map((call) => textOf(call.payload))

describe("Telegram channel: pairing the first owner", () => {
  it.scoped("with nobody allowed, the one-time code pairs whoever sends it first; wrong or reused codes are refused", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      const start = startTelegramPolling({
        token: Redacted.make(TOKEN),
        apiRoot: fake.apiRoot,
        config: Schema.decodeUnknownSync(TelegramConfig)({})
      })
      const channel = yield* start
      const code = Option.getOrThrow(channel.pairingCode)
      assert.match(code, /^[A-Z2-9]{10}$/)
      assert.deepStrictEqual(yield* (yield* ApprovalRouter).answering, [])
      fake.push(textMessage(STRANGER, "/pair WRONGCODE1", 1))
      yield* fake.awaitCall((call) => call.method === "sendMessage")
      fake.push(textMessage(OWNER, `/pair ${code.toLowerCase()}`, 2))
      yield* fake.awaitCall((call) => call.method === "sendMessage", 2)
      assert.deepStrictEqual(textsTo(fake, OWNER.id), ["Paired: you are myclaw's owner now. /help says what I do."])
      assert.deepStrictEqual(yield* (yield* ApprovalRouter).answering, ["telegram"])
      fake.push(textMessage(STRANGER, `/pair ${code}`, 3))
      fake.push(textMessage(OWNER, "hello", 4))
      yield* fake.awaitCall((call) => call.method === "sendMessage" && call.payload.chat_id === OWNER.id, 2)
      assert.deepStrictEqual(textsTo(fake, OWNER.id).slice(1), ["Hello!"])
      assert.deepStrictEqual(textsTo(fake, STRANGER.id), [
        "Sorry, this is a private assistant: I only talk to its owner."
      ])
      const kept = JSON.parse(yield* probeTools.read(yield* Workspace, ".telegram/paired.json")) as unknown
      assert.deepStrictEqual(kept, { paired: [OWNER.id] })
    }).pipe(Effect.provide(telegramGraph({ telegram: { allowedUserIds: [] }, script: [{ text: "Hello!" }] }))))

  it.scoped("with owners configured there is no pairing code", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      const channel = yield* startTelegramPolling({
        token: Redacted.make(TOKEN),
        apiRoot: fake.apiRoot,
        config: Schema.decodeUnknownSync(TelegramConfig)({ allowedUserIds: [OWNER.id] })
      })
      assert.isTrue(Option.isNone(channel.pairingCode))
    }).pipe(Effect.provide(telegramGraph({ script: [] }))))
})
