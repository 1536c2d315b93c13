import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { RecordedTraces } from "../../../src/layers/traces/TraceStoreMemory.js"
import { ApprovalRouter } from "../../../src/services/ApprovalRouter.js"
import { buttonPress, FakeBotApi, OWNER, STRANGER, textMessage } from "./FakeBotApi.js"
import { captureLogs, startBot, telegramGraph, textOf } from "./support.js"

describe("Telegram channel: messages", () => {
  it.scoped("a message from the owner gets its answer in the same chat; the turn is traced on its telegram channel", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      fake.push(textMessage(OWNER, "hello"))
      const answer = yield* fake.awaitCall((call) => call.method === "sendMessage")
      assert.strictEqual(answer.payload.chat_id, OWNER.id)
      assert.strictEqual(textOf(answer.payload), "Hello!")
      assert.isUndefined(answer.payload.parse_mode)
      const traces = yield* (yield* RecordedTraces).all
      assert.strictEqual(traces.length, 1)
      assert.strictEqual(traces[0]!.channel, "telegram:@Mark_Heizenberg")
      assert.strictEqual(traces[0]!.session_id, `telegram-${OWNER.id}`)
      assert.strictEqual(traces[0]!.user_message, "hello")
      assert.isAbove(fake.sent("sendChatAction").length, 0)
      assert.strictEqual(fake.sent("sendChatAction")[0]!.payload.action, "typing")
    }).pipe(Effect.provide(telegramGraph({ script: [{ text: "Hello!" }] }))))

  it.scoped("a stranger gets one polite refusal, logged without the text; the runtime never sees it", () => {
    const logs = captureLogs()
    return Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      fake.push(textMessage(STRANGER, "secret plan alpha", 1))
      fake.push(textMessage(STRANGER, "secret plan beta", 2))
      fake.push(textMessage(OWNER, "hello", 3))
      const toOwner = yield* fake.awaitCall((call) =>
        call.method === "sendMessage" && call.payload.chat_id === OWNER.id
      )
      assert.strictEqual(textOf(toOwner.payload), "Hello!")
      const toStranger = fake.sent("sendMessage").filter((call) => call.payload.chat_id === STRANGER.id)
      assert.deepStrictEqual(toStranger.map((call) => textOf(call.payload)), [
        "Sorry, this is a private assistant: I only talk to its owner."
      ])
      const traces = yield* (yield* RecordedTraces).all
      assert.deepStrictEqual(traces.map((trace) => trace.user_message), ["hello"])
      const refusals = logs.lines.filter((line) => line.includes(`refused a message from user ${STRANGER.id}`))
      assert.strictEqual(refusals.length, 2)
      assert.isFalse(logs.lines.some((line) => line.includes("secret plan")))
    }).pipe(Effect.provide(telegramGraph({ script: [{ text: "Hello!" }] })), Effect.provide(logs.layer))
  })

  it.scoped("malformed updates (missing fields, unknown types, garbage button data) are logged and skipped", () => {
    const logs = captureLogs()
    return Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      const missing = fake.push({ message: { message_id: 5, text: "no chat, no sender" } })
      const unknown = fake.push({ edited_message: { message_id: 6, chat: { id: OWNER.id, type: "private" } } })
      fake.push(buttonPress(OWNER, "garbage data", 77))
      fake.push({ message: { message_id: 8, chat: { id: OWNER.id, type: "private" }, date: 1, text: "no sender" } })
      fake.push(textMessage(OWNER, "still there?", 9))
      const answer = yield* fake.awaitCall((call) => call.method === "sendMessage")
      assert.strictEqual(textOf(answer.payload), "Yes.")
      assert.isTrue(logs.lines.some((line) => line.includes(`ignored update ${missing}: malformed update`)))
      assert.isTrue(
        logs.lines.some((line) => line.includes(`ignored update ${unknown}: unhandled update type edited_message`))
      )
      assert.isTrue(logs.lines.some((line) => line.includes("ignored a button press with unknown data")))
      assert.isTrue(logs.lines.some((line) => line.includes("ignored a message without a human sender")))
      assert.isFalse(logs.lines.some((line) => line.includes("no chat, no sender")))
      const pressAnswer = yield* fake.awaitCall((call) => call.method === "answerCallbackQuery")
      assert.strictEqual(pressAnswer.payload.text, "Unknown button")
      const traces = yield* (yield* RecordedTraces).all
      assert.deepStrictEqual(traces.map((trace) => trace.user_message), ["still there?"])
    }).pipe(Effect.provide(telegramGraph({ script: [{ text: "Yes." }] })), Effect.provide(logs.layer))
  })

  it.scoped("group chats are ignored unless telegram.allowGroups is on", () => {
    const logs = captureLogs()
    const group = { id: -1001381869258, title: "Group", type: "supergroup" }
    return Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      fake.push({ message: { message_id: 966, from: OWNER, chat: group, date: 1602865098, text: "in the group" } })
      fake.push(textMessage(OWNER, "in private", 2))
      yield* fake.awaitCall((call) => call.method === "sendMessage")
      assert.deepStrictEqual(fake.sent("sendMessage").map((call) => call.payload.chat_id), [OWNER.id])
      const traces = yield* (yield* RecordedTraces).all
      assert.deepStrictEqual(traces.map((trace) => trace.user_message), ["in private"])
      assert.isTrue(logs.lines.some((line) => line.includes(`ignored a message in supergroup chat ${group.id}`)))
    }).pipe(Effect.provide(telegramGraph({ script: [{ text: "Hello!" }] })), Effect.provide(logs.layer))
  })

  it.scoped("without TELEGRAM_BOT_TOKEN the channel is off: nothing registers, no call reaches the Bot API", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake, { TELEGRAM_BOT_TOKEN: "" })
      assert.deepStrictEqual(yield* (yield* ApprovalRouter).answering, [])
      assert.deepStrictEqual(fake.calls, [])
    }).pipe(Effect.provide(telegramGraph({ script: [{ text: "Hello!" }] }))))

  it.scoped("with the token the channel starts: it answers approvals for the owner and polls the configured server", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      assert.deepStrictEqual(yield* (yield* ApprovalRouter).answering, ["telegram"])
      yield* fake.awaitCall((call) => call.method === "getUpdates")
      assert.deepStrictEqual(fake.calls.map((call) => call.method).slice(0, 2), ["deleteWebhook", "getUpdates"])
      assert.strictEqual(fake.sent("getUpdates")[0]!.payload.timeout, 30)
    }).pipe(Effect.provide(telegramGraph({ script: [] }))))
})
