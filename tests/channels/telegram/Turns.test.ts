import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope, TestClock } from "effect"
import { RecordedTraces } from "../../../src/layers/traces/TraceStoreMemory.js"
import { conversationOf } from "../../../src/programs/turn/Conversation.js"
import { Sessions } from "../../../src/services/Sessions.js"
import { probeTools } from "../../contract/fixtures.js"
import { FakeBotApi, OWNER, textMessage } from "./FakeBotApi.js"
import { startBot, telegramGraph, textOf } from "./support.js"

const FRIEND = { id: 555000222, is_bot: false, first_name: "Ann", username: "ann_friend" }

const textsTo = (fake: FakeBotApi, chatId: number) =>
  fake.sent("sendMessage").filter((call) => call.payload.chat_id === chatId).map((call) => textOf(call.payload))

const tracesOf = (channel: string) =>
  Effect.map(Effect.flatMap(RecordedTraces, (traces) => traces.all), (all) => all.filter((t) => t.channel === channel))

describe("Telegram channel: turns, queues and commands", () => {
  const probe = probeTools.make()
  it.scoped("/stop during a slow tool interrupts the turn: the trace ends user_aborted and is persisted", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      fake.push(textMessage(OWNER, "take your time", 1))
      yield* probe.started
      fake.push(textMessage(OWNER, "/stop", 2))
      const stopped = yield* fake.awaitCall((call) => call.method === "sendMessage")
      assert.include(textOf(stopped.payload), "Stopped.")
      const traces = yield* tracesOf("telegram:@Mark_Heizenberg")
      assert.strictEqual(traces.length, 1)
      assert.strictEqual(traces[0]!.outcome, "user_aborted")
      assert.strictEqual(traces[0]!.user_message, "take your time")
      fake.push(textMessage(OWNER, "/stop", 3))
      yield* fake.awaitCall((call) => call.method === "sendMessage", 2)
      assert.deepStrictEqual(textsTo(fake, OWNER.id).slice(1), ["Nothing is running."])
    }).pipe(Effect.provide(telegramGraph({
      tools: probe.tools,
      script: [{ toolCalls: [{ name: "slow", args: {} }] }, { text: "done" }]
    }))))

  const probe3 = probeTools.make()
  it.scoped("shutting down aborts the running turn cleanly (persisted as user_aborted) and stops polling", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      const scope = yield* Scope.make()
      yield* Scope.extend(startBot(fake), scope)
      fake.push(textMessage(OWNER, "take your time", 1))
      yield* probe3.started
      yield* Scope.close(scope, Exit.void)
      const traces = yield* tracesOf("telegram:@Mark_Heizenberg")
      assert.deepStrictEqual(traces.map((trace) => trace.outcome), ["user_aborted"])
      const polls = fake.sent("getUpdates").length
      fake.push(textMessage(OWNER, "anyone?", 2))
      for (let i = 0; i < 20; i++) yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
      assert.strictEqual(fake.sent("getUpdates").length, polls)
      assert.strictEqual((yield* tracesOf("telegram:@Mark_Heizenberg")).length, 1)
    }).pipe(Effect.provide(telegramGraph({
      tools: probe3.tools,
      script: [{ toolCalls: [{ name: "slow", args: {} }] }, { text: "done" }, { text: "again" }]
    }))))

  const probe8 = probeTools.make()
  it.scoped("shutting down with messages waiting tells the owner they were not read, to send them again", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      const scope = yield* Scope.make()
      yield* Scope.extend(startBot(fake), scope)
      fake.push(textMessage(OWNER, "take your time", 1))
      yield* probe8.started
      fake.push(textMessage(OWNER, "and then this", 2))
      const last = fake.push(textMessage(OWNER, "and that", 3))
      yield* fake.awaitCall((call) => call.method === "getUpdates" && call.payload.offset === last + 1)
      yield* Scope.close(scope, Exit.void)
      const told = textsTo(fake, OWNER.id).find((text) => text.includes("were not read"))
      assert.include(told, "2 messages you sent")
      assert.include(told, "send them again")
      assert.strictEqual((yield* tracesOf("telegram:@Mark_Heizenberg")).length, 1)
    }).pipe(Effect.provide(telegramGraph({
      tools: probe8.tools,
      script: [{ toolCalls: [{ name: "slow", args: {} }] }, { text: "done" }]
    }))))

  const probe4 = probeTools.make()
  it.scoped("a long turn shows one status message, edited as it goes, then replaced by the answer, which notifies", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      fake.push(textMessage(OWNER, "take your time", 1))
      yield* probe4.started
      yield* TestClock.adjust("5 seconds")
      const status = yield* fake.awaitCall((call) => call.method === "sendMessage")
      assert.strictEqual(textOf(status.payload), "⏳ Working: step 1 of at most 10 · running slow · 5 s")
      yield* TestClock.adjust("3 seconds")
      const edited = yield* fake.awaitCall((call) => call.method === "editMessageText")
      assert.strictEqual(edited.payload.message_id, 1000)
      assert.strictEqual(textOf(edited.payload), "⏳ Working: step 1 of at most 10 · running slow · 8 s")
      yield* TestClock.adjust("2 seconds")
      // Telegram does not notify an edit: the answer comes as a new message, and the status message goes.
      const answer = yield* fake.awaitCall((call) => call.method === "sendMessage", 2)
      assert.strictEqual(textOf(answer.payload), "done")
      const removed = yield* fake.awaitCall((call) => call.method === "deleteMessage")
      assert.deepStrictEqual(removed.payload, { chat_id: OWNER.id, message_id: 1000 })
      assert.strictEqual(fake.calls.indexOf(answer) < fake.calls.indexOf(removed), true, "the answer comes first")
      assert.strictEqual(fake.sent("editMessageText").length, 1)
    }).pipe(Effect.provide(telegramGraph({
      tools: probe4.tools,
      telegram: { progressAfterMs: 5000 },
      script: [{ toolCalls: [{ name: "slow", args: {} }] }, { text: "done" }]
    }))))

  const probe5 = probeTools.make()
  it.scoped("a stopped turn takes its status message away; one that cannot be deleted says where the answer is", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      fake.push(textMessage(OWNER, "take your time", 1))
      yield* probe5.started
      yield* TestClock.adjust("5 seconds")
      const status = yield* fake.awaitCall((call) => call.method === "sendMessage")
      assert.include(textOf(status.payload), "Working")
      fake.push(textMessage(OWNER, "/stop", 2))
      const removed = yield* fake.awaitCall((call) => call.method === "deleteMessage")
      assert.deepStrictEqual(removed.payload, { chat_id: OWNER.id, message_id: 1000 })
      assert.include(textsTo(fake, OWNER.id)[1], "Stopped.")
      // The next long turn: its status message cannot be deleted, so it is edited to point at the answer.
      fake.failNext("deleteMessage", 400, {
        ok: false,
        error_code: 400,
        description: "Bad Request: message can't be deleted for everyone"
      })
      fake.push(textMessage(OWNER, "once more", 3))
      yield* probe5.started
      yield* TestClock.adjust("5 seconds")
      yield* fake.awaitCall((call) => call.method === "sendMessage", 3)
      yield* TestClock.adjust("5 seconds")
      const pointed = yield* fake.awaitCall((call) =>
        call.method === "editMessageText" && call.payload.text === "Done: the answer is below."
      )
      assert.strictEqual(pointed.payload.message_id, 1002)
      assert.deepStrictEqual(textsTo(fake, OWNER.id).slice(3), ["again"])
    }).pipe(Effect.provide(telegramGraph({
      tools: probe5.tools,
      telegram: { progressAfterMs: 5000 },
      script: [
        { toolCalls: [{ name: "slow", args: {} }] },
        { toolCalls: [{ name: "slow", args: {} }] },
        { text: "again" }
      ]
    }))))

  const probe6 = probeTools.make()
  it.scoped("an answer replies to its message when the owner wrote more since; otherwise it is a plain message", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      fake.push(textMessage(OWNER, "first question", 11))
      yield* probe6.started
      const last = fake.push(textMessage(OWNER, "second question", 12))
      yield* fake.awaitCall((call) => call.method === "getUpdates" && call.payload.offset === last + 1)
      yield* TestClock.adjust("10 seconds")
      const answers = [
        yield* fake.awaitCall((call) => call.method === "sendMessage"),
        yield* fake.awaitCall((call) => call.method === "sendMessage", 2)
      ]
      assert.deepStrictEqual(answers.map((call) => textOf(call.payload)), ["first answer", "second answer"])
      assert.deepStrictEqual(answers[0]!.payload.reply_parameters, {
        message_id: 11,
        allow_sending_without_reply: true
      })
      assert.isUndefined(answers[1]!.payload.reply_parameters, "the latest message needs no pointer")
    }).pipe(Effect.provide(telegramGraph({
      tools: probe6.tools,
      script: [{ toolCalls: [{ name: "slow", args: {} }] }, { text: "first answer" }, { text: "second answer" }]
    }))))

  const probe7 = probeTools.make()
  it.scoped("an edit of a waiting message is what its turn reads; an edit of one already read is answered, not lost", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      const edited = (messageId: number, text: string) => ({
        edited_message: { ...textMessage(OWNER, text, messageId).message, edit_date: 1602575100 }
      })
      fake.push(textMessage(OWNER, "first question", 21))
      yield* probe7.started
      fake.push(textMessage(OWNER, "secnod qestion", 22))
      fake.push(edited(22, "second question"))
      const last = fake.push(edited(21, "first question, better put"))
      yield* fake.awaitCall((call) => call.method === "getUpdates" && call.payload.offset === last + 1)
      const told = yield* fake.awaitCall((call) => call.method === "sendMessage")
      assert.include(textOf(told.payload), "already reading")
      assert.deepStrictEqual(told.payload.reply_parameters, { message_id: 21, allow_sending_without_reply: true })
      yield* TestClock.adjust("10 seconds")
      yield* fake.awaitCall((call) => call.method === "sendMessage", 3)
      const said = (yield* tracesOf("telegram:@Mark_Heizenberg")).map((trace) => trace.user_message)
      assert.deepStrictEqual(said, ["first question", "second question"])
      assert.deepStrictEqual(fake.sent("getUpdates")[0]!.payload.allowed_updates, [
        "message",
        "edited_message",
        "callback_query"
      ])
    }).pipe(Effect.provide(telegramGraph({
      tools: probe7.tools,
      script: [{ toolCalls: [{ name: "slow", args: {} }] }, { text: "first answer" }, { text: "second answer" }]
    }))))

  for (const sessions of ["memory", "sqlite"] as const) {
    it.scoped(`an owner who changes their @username keeps their conversation (${sessions} sessions)`, () =>
      Effect.gen(function*() {
        const fake = yield* FakeBotApi
        yield* startBot(fake)
        fake.push(textMessage(OWNER, "my name is Max", 1))
        yield* fake.awaitCall((call) => call.method === "sendMessage")
        fake.push(textMessage({ ...OWNER, username: "max_renamed" }, "what is my name?", 2))
        const answer = yield* fake.awaitCall((call) => call.method === "sendMessage", 2)
        assert.strictEqual(textOf(answer.payload), "Max.")
        const traces = yield* (yield* RecordedTraces).all
        assert.deepStrictEqual(traces.map((trace) => [trace.channel, trace.outcome]), [
          ["telegram:@Mark_Heizenberg", "success"],
          ["telegram:@max_renamed", "success"]
        ])
        const history = yield* (yield* Sessions).history(`telegram-${OWNER.id}`, "telegram:@max_renamed")
        assert.deepStrictEqual(history.turns.map((turn) => turn.user_message), ["my name is Max", "what is my name?"])
      }).pipe(Effect.provide(telegramGraph({ sessions, script: [{ text: "Hello Max." }, { text: "Max." }] }))))
  }

  const probe2 = probeTools.make()
  it.scoped("two chats run turns at once, while one chat's messages are answered in order", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      fake.push(textMessage(OWNER, "a1", 1))
      fake.push(textMessage(OWNER, "a2", 2))
      yield* probe2.started
      fake.push(textMessage(FRIEND, "b1", 3))
      const friend = yield* fake.awaitCall((call) =>
        call.method === "sendMessage" && call.payload.chat_id === FRIEND.id
      )
      assert.strictEqual(textOf(friend.payload), "b1 done")
      assert.deepStrictEqual(textsTo(fake, OWNER.id), [])
      yield* TestClock.adjust("10 seconds")
      yield* fake.awaitCall((call) => call.method === "sendMessage" && call.payload.chat_id === OWNER.id, 2)
      assert.deepStrictEqual(textsTo(fake, OWNER.id), ["a1 done", "a2 done"])
      const owner = yield* tracesOf("telegram:@Mark_Heizenberg")
      assert.deepStrictEqual(owner.map((trace) => trace.user_message), ["a1", "a2"])
      assert.deepStrictEqual(owner.map((trace) => trace.final_response), ["a1 done", "a2 done"])
    }).pipe(Effect.provide(telegramGraph({
      tools: probe2.tools,
      telegram: { allowedUserIds: [OWNER.id, FRIEND.id] },
      script: [{ toolCalls: [{ name: "slow", args: {} }] }, { text: "b1 done" }, { text: "a1 done" }, {
        text: "a2 done"
      }]
    }))))

  it.scoped("/help, /status, /budget and /new answer in the chat; /new starts another session", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      const commands = ["/help", "/status", "/budget", "/frobnicate", "/digest"]
      commands.forEach((text, i) => fake.push(textMessage(OWNER, text, i + 1)))
      yield* fake.awaitCall((call) => call.method === "sendMessage", commands.length)
      // Replies are sent in their own fibers: find each by its content, not its position.
      const texts = textsTo(fake, OWNER.id)
      const one = (pattern: RegExp) => {
        const found = texts.filter((text) => pattern.test(text))
        assert.strictEqual(found.length, 1, `${pattern} in ${JSON.stringify(texts)}`)
        return found[0]!
      }
      assert.include(one(/^I am myclaw\./), "/stop")
      assert.include(one(/^myclaw is up\./), "running turns: 0")
      one(/^spent today/)
      one(/^Unknown command \/frobnicate\./)
      one(/^myclaw · digest · \d{4}-\d{2}-\d{2}\n/)
      fake.push(textMessage(OWNER, "first", 10))
      yield* fake.awaitCall((call) => call.method === "sendMessage", commands.length + 1)
      fake.push(textMessage(OWNER, "/new", 11))
      fake.push(textMessage(OWNER, "second", 12))
      yield* fake.awaitCall((call) => call.method === "sendMessage", commands.length + 3)
      assert.include(textsTo(fake, OWNER.id).join("\n"), "New conversation started")
      const traces = yield* tracesOf("telegram:@Mark_Heizenberg")
      assert.deepStrictEqual(traces.map((trace) => trace.user_message), ["first", "/new", "second"])
      // /new is stored in the chat's session: the conversation it starts is what the store (and so a restarted
      // service) gives the next prompt.
      const session = `telegram-${OWNER.id}`
      assert.deepStrictEqual(traces.map((trace) => trace.session_id), [session, session, session])
      const history = yield* (yield* Sessions).history(session, "telegram:@Mark_Heizenberg")
      assert.deepStrictEqual(conversationOf(history.turns).turns.map((turn) => turn.user_message), ["second"])
    }).pipe(Effect.provide(telegramGraph({ script: [{ text: "one" }, { text: "two" }] }))))
})
