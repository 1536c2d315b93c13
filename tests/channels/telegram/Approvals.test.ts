import { assert, describe, it } from "@effect/vitest"
import { Chunk, Clock, Effect, Layer, TestClock } from "effect"
import { describeForTelegram } from "../../../src/channels/telegram/Approvals.js"
import type { ActionStep, ExecutionTrace } from "../../../src/domain/ExecutionTrace.js"
import { decodeTrace } from "../../../src/domain/ExecutionTrace.js"
import { RecordedTraces } from "../../../src/layers/traces/TraceStoreMemory.js"
import { AuditLog } from "../../../src/services/AuditLog.js"
import { Workspace } from "../../../src/services/Workspace.js"
import { probeTools } from "../../contract/fixtures.js"
import { Loopback, postJson, serve, TOKEN as ADMIN } from "../../http/support.js"
import {
  buttonPress,
  type Call,
  FakeBotApi,
  type FakeBotApi as Fake,
  OWNER,
  STRANGER,
  textMessage
} from "./FakeBotApi.js"
import { startBot, telegramGraph, textOf } from "./support.js"

const writeScript = [{ toolCalls: [{ name: "fs_write", args: { path: "notes/a.md", content: "hi" } }] }, {
  text: "written"
}]

interface Button {
  readonly text: string
  readonly callback_data: string
}

const buttonsOf = (call: Call): ReadonlyArray<Button> =>
  ((call.payload.reply_markup as { inline_keyboard: ReadonlyArray<ReadonlyArray<Button>> } | undefined)
    ?.inline_keyboard ?? []).flat()

const button = (call: Call, label: string) => buttonsOf(call).find((b) => b.text === label)!.callback_data

/** The question with buttons, once the turn waits for it; and the message id it was sent as (the fake counts). */
const question = (fake: Fake) =>
  Effect.map(
    fake.awaitCall((call) => call.method === "sendMessage" && buttonsOf(call).length > 0),
    (call) => ({ call, messageId: 1000 + fake.sent("sendMessage").indexOf(call) })
  )

const answers = (fake: Fake) => fake.sent("answerCallbackQuery").map((call) => call.payload.text)

const actions = (trace: ExecutionTrace) => trace.steps.filter((step): step is ActionStep => step.kind === "action")

const lastTrace = Effect.flatMap(
  RecordedTraces,
  (traces) => Effect.map(traces.all.pipe(Effect.repeat({ until: (all) => all.length > 0 })), (all) => all.at(-1)!)
)

describe("describeForTelegram", () => {
  it("shows control, bidirectional and format characters escaped, in every field and the arguments", () => {
    const text = describeForTelegram(
      {
        requestId: "r1",
        nonce: "0".repeat(32),
        expiresAt: 60_000,
        request: {
          tool: "fs_write",
          summary: "write 2 bytes to notes/\u202egnp.md",
          target: "notes/\u202egnp.md",
          effectClass: "fs_write:notes/\u202egnp.md",
          args: { path: "notes/\u202egnp.md", content: "a\u200bb" },
          argsHash: "h",
          reason: "asks\u0007",
          sessionId: "s",
          traceId: "t",
          channel: "http:\u001b[31m",
          requester: "http",
          tainted: { sources: ["web:\u2066x"] }
        }
      },
      0,
      true
    )
    assert.notMatch(text, /[\u202e\u200b\u0007\u001b\u2066]/)
    assert.include(text, "on notes/\\u202egnp.md")
    assert.include(text, "\"content\":\"a\\u200bb\"")
    assert.include(text, "from: http:\\u001b[31m")
    assert.include(text, "untrusted content from: web:\\u2066x")
    assert.include(text, "expires in 60 s")
  })
})

describe("Telegram channel: approvals with inline buttons", () => {
  it.scoped("the question has Approve, Deny and Approve for 10 minutes; a press runs exactly the approved args", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      fake.push(textMessage(OWNER, "write it"))
      const { call, messageId } = yield* question(fake)
      assert.strictEqual(call.payload.chat_id, OWNER.id)
      assert.deepStrictEqual(buttonsOf(call).map((b) => b.text), ["Approve", "Deny", "Approve for 10 minutes"])
      assert.include(textOf(call.payload), "fs_write on notes/a.md")
      assert.include(textOf(call.payload), "{\"path\":\"notes/a.md\",\"content\":\"hi\"}")
      assert.match(button(call, "Approve"), /^ap:[0-9a-f]{32}:y$/)
      fake.push(buttonPress(OWNER, button(call, "Approve"), messageId))
      const answer = yield* fake.awaitCall((c) => c.method === "sendMessage" && textOf(c.payload) === "written")
      assert.strictEqual(answer.payload.chat_id, OWNER.id)
      const trace = yield* lastTrace
      assert.strictEqual(trace.outcome, "success")
      assert.deepStrictEqual(actions(trace)[0]!.args, { path: "notes/a.md", content: "hi" })
      assert.strictEqual(actions(trace)[0]!.approval?.via, "telegram")
      assert.strictEqual(yield* probeTools.read(yield* Workspace, "notes/a.md"), "hi")
      const edit = yield* fake.awaitCall((c) => c.method === "editMessageText")
      assert.strictEqual(edit.payload.message_id, messageId)
      assert.isUndefined(edit.payload.reply_markup)
      assert.include(textOf(edit.payload), "✅ Approved once by telegram:@Mark_Heizenberg")
      assert.deepStrictEqual(answers(fake), ["✅ Approved once"])
    }).pipe(Effect.provide(telegramGraph({ script: writeScript }))))

  it.scoped("a message typed while a question waits is told to use the buttons, and is read after the turn", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      fake.push(textMessage(OWNER, "write it", 1))
      const { call, messageId } = yield* question(fake)
      fake.push(textMessage(OWNER, "yes", 2))
      const told = yield* fake.awaitCall((c) => c.method === "sendMessage" && buttonsOf(c).length === 0)
      assert.strictEqual(told.payload.chat_id, OWNER.id)
      assert.strictEqual(
        textOf(told.payload),
        "Your earlier request is waiting for your answer: use the buttons on its question (or /stop). " +
          "I will read this message after it."
      )
      fake.push(buttonPress(OWNER, button(call, "Approve"), messageId))
      yield* fake.awaitCall((c) => c.method === "sendMessage" && textOf(c.payload) === "written")
      yield* fake.awaitCall((c) => c.method === "sendMessage" && textOf(c.payload) === "ok")
      const traces = yield* (yield* RecordedTraces).all
      assert.deepStrictEqual(traces.map((trace) => [trace.user_message, trace.outcome]), [
        ["write it", "success"],
        ["yes", "success"]
      ])
    }).pipe(Effect.provide(telegramGraph({ script: [...writeScript, { text: "ok" }] }))))

  // The arguments are shown up to 1,500 characters: here an emoji straddles that cut.
  const argsPrefix = JSON.stringify({ path: "notes/a.md", content: "" }).length - 2
  const emojiContent = `${"x".repeat(1499 - argsPrefix)}${"😀".repeat(50)}`
  it.scoped("arguments cut in the middle of an emoji are still asked about (Telegram refuses half of one)", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      fake.push(textMessage(OWNER, "write it"))
      const { call, messageId } = yield* question(fake)
      assert.isTrue(textOf(call.payload).isWellFormed())
      assert.include(textOf(call.payload), `${"x".repeat(20)}…`)
      fake.push(buttonPress(OWNER, button(call, "Approve"), messageId))
      yield* fake.awaitCall((c) => c.method === "sendMessage" && textOf(c.payload) === "written")
      assert.strictEqual(yield* probeTools.read(yield* Workspace, "notes/a.md"), emojiContent)
    }).pipe(Effect.provide(telegramGraph({
      script: [{ toolCalls: [{ name: "fs_write", args: { path: "notes/a.md", content: emojiContent } }] }, {
        text: "written"
      }]
    }))))

  it.scoped("a press from another user, or on an old request, answers \"expired\" and changes nothing", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake, {})
      fake.push(textMessage(OWNER, "write it"))
      const { call, messageId } = yield* question(fake)
      const approve = button(call, "Approve")
      fake.push(buttonPress(STRANGER, approve, messageId, OWNER.id))
      yield* fake.awaitCall((c) => c.method === "answerCallbackQuery")
      fake.push(buttonPress(OWNER, `ap:${"0".repeat(32)}:y`, messageId))
      yield* fake.awaitCall((c) => c.method === "answerCallbackQuery", 2)
      assert.deepStrictEqual(answers(fake), ["expired", "expired"])
      assert.deepStrictEqual(fake.sent("editMessageText"), [])
      assert.isFalse(yield* probeTools.exists(yield* Workspace, "notes/a.md"))
      const rejected = (yield* (yield* AuditLog).query({ kind: "approval", limit: 20 }))
        .filter((record) => record.kind === "approval" && record.event === "answer_rejected")
      assert.deepStrictEqual(rejected.map((record) => record.kind === "approval" && record.reason), ["foreign"])

      fake.push(buttonPress(OWNER, button(call, "Deny"), messageId))
      yield* fake.awaitCall((c) => c.method === "editMessageText")
      const trace = yield* lastTrace
      assert.strictEqual(actions(trace)[0]!.approval?.granted, false)
      assert.isFalse(yield* probeTools.exists(yield* Workspace, "notes/a.md"))
      fake.push(buttonPress(OWNER, approve, messageId))
      yield* fake.awaitCall((c) => c.method === "answerCallbackQuery", 4)
      assert.deepStrictEqual(answers(fake), ["expired", "expired", "❌ Denied", "expired"])
      assert.strictEqual(fake.sent("editMessageText").length, 1)
      assert.include(textOf(fake.sent("editMessageText")[0]!.payload), "❌ Denied")
      assert.isFalse(yield* probeTools.exists(yield* Workspace, "notes/a.md"))
    }).pipe(Effect.provide(telegramGraph({ script: [...writeScript.slice(0, 1), { text: "not written" }] }))))

  it.scoped("while a question waits for the owner, the chat does not show \"typing…\"", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      fake.push(textMessage(OWNER, "write it"))
      const { call, messageId } = yield* question(fake)
      const typed = fake.sent("sendChatAction").length
      const now = yield* Clock.currentTimeMillis
      yield* TestClock.adjust("5 seconds")
      // The typing loop (every 4 s from the turn's start) has had its turn once it sleeps until 8 s.
      while (!Chunk.toReadonlyArray(yield* TestClock.sleeps()).includes(now + 8000)) {
        yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
      }
      assert.strictEqual(fake.sent("sendChatAction").length, typed, "typing under an unanswered question")
      fake.push(buttonPress(OWNER, button(call, "Approve"), messageId))
      const answer = yield* fake.awaitCall((c) => c.method === "sendMessage" && buttonsOf(c).length === 0)
      assert.strictEqual(textOf(answer.payload), "written")
    }).pipe(Effect.provide(telegramGraph({ script: writeScript }))))

  it.scoped("a long turn's status message says it waits for the owner's answer, not that the tool runs", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      fake.push(textMessage(OWNER, "write it"))
      yield* question(fake)
      yield* TestClock.adjust("5 seconds")
      const status = yield* fake.awaitCall((c) => c.method === "sendMessage" && textOf(c.payload).startsWith("⏳"))
      assert.strictEqual(textOf(status.payload), "⏳ Step 1 of at most 10 · waiting for your answer to fs_write · 5 s")
    }).pipe(Effect.provide(telegramGraph({ script: writeScript, telegram: { progressAfterMs: 5000 } }))))

  it.scoped("an unanswered question loses its buttons when the request expires; a later press is \"expired\"", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      fake.push(textMessage(OWNER, "write it"))
      const { call, messageId } = yield* question(fake)
      yield* TestClock.adjust("301 seconds")
      const edit = yield* fake.awaitCall((c) => c.method === "editMessageText")
      assert.strictEqual(edit.payload.message_id, messageId)
      assert.isUndefined(edit.payload.reply_markup)
      assert.include(textOf(edit.payload), "No longer pending")
      const trace = yield* lastTrace
      assert.strictEqual(actions(trace)[0]!.approval?.via, "timeout")
      fake.push(buttonPress(OWNER, button(call, "Approve"), messageId))
      yield* fake.awaitCall((c) => c.method === "answerCallbackQuery")
      assert.deepStrictEqual(answers(fake), ["expired"])
      assert.isFalse(yield* probeTools.exists(yield* Workspace, "notes/a.md"))
    }).pipe(Effect.provide(telegramGraph({ script: [...writeScript.slice(0, 1), { text: "not written" }] }))))

  it.scoped("an HTTP turn's approval is asked in the owner's chat, naming its channel, and a tap answers it", () =>
    Effect.gen(function*() {
      const fake = yield* FakeBotApi
      yield* startBot(fake)
      yield* serve()
      const turn = yield* Effect.fork(
        Effect.flatMap(
          postJson("/v1/turns", { message: "write it", session_id: "s-http" }, ADMIN),
          (response) => Effect.flatMap(response.json, decodeTrace)
        )
      )
      const { call, messageId } = yield* question(fake)
      assert.strictEqual(call.payload.chat_id, OWNER.id)
      assert.include(textOf(call.payload), "from: http (session s-http)")
      fake.push(buttonPress(OWNER, button(call, "Approve"), messageId))
      const trace = yield* Effect.flatMap(Effect.fromFiber(turn), Effect.succeed)
      assert.strictEqual(trace.outcome, "success")
      assert.strictEqual(actions(trace)[0]!.approval?.via, "telegram")
      assert.strictEqual(yield* probeTools.read(yield* Workspace, "notes/a.md"), "hi")
      const edit = yield* fake.awaitCall((c) => c.method === "editMessageText")
      assert.include(textOf(edit.payload), "✅ Approved once by telegram:@Mark_Heizenberg")
    }).pipe(Effect.provide(Layer.merge(telegramGraph({ script: writeScript }), Loopback))))
})
