import { Clock, Duration, Effect, Option } from "effect"
import type { Api } from "grammy"
import type { InlineKeyboardMarkup, MessageEntity } from "grammy/types"
import { markdownToEntities, type TgEntity } from "../../domain/TelegramMarkdown.js"
import { splitFormatted, splitMessage } from "../../domain/TelegramText.js"
import { wellFormed } from "../../domain/Text.js"
import { type Bucket, type BucketRate, takeToken } from "../../domain/TokenBucket.js"
import { type ApiSignal, callApi, type RetryOptions, type TelegramError } from "./Api.js"

/** Telegram's limits on what a bot sends: about 30 messages a second overall, 1 a second per chat (bursts allowed). */
const globalRate: BucketRate = { capacity: 30, perSecond: 30 }
const privateRate: BucketRate = { capacity: 20, perSecond: 1 }
const groupRate: BucketRate = { capacity: 20, perSecond: 20 / 60 }

/** An entity as the Bot API takes it. */
const toMessageEntity = (entity: TgEntity): MessageEntity => {
  const at = { offset: entity.offset, length: entity.length }
  switch (entity.type) {
    case "text_link":
      return { type: "text_link", ...at, url: entity.url ?? "" }
    case "pre":
      return entity.language === undefined ? { type: "pre", ...at } : { type: "pre", ...at, language: entity.language }
    default:
      return { type: entity.type, ...at }
  }
}

/**
 * What the channel sends, kept under Telegram's rates; failures are logged here and never reach a turn. Every text
 * goes well-formed (half of an emoji as U+FFFD): Telegram refuses a message holding half of one.
 */
export interface Outbox {
  /**
   * The text as plain text (no parse mode: nothing in it can break the message), split under the length limit;
   * whether every part went (a failure is logged).
   */
  readonly sendText: (chatId: number, text: string, replyTo?: number) => Effect.Effect<boolean>
  /**
   * A model's answer: its Markdown shown as formatting (entities, never a parse mode), split like sendText; a part
   * Telegram refuses with its formatting goes again as plain text. Whether every part went.
   */
  readonly sendAnswer: (chatId: number, markdown: string, replyTo?: number) => Effect.Effect<boolean>
  /**
   * One message, with buttons; its message id. `replyTo` shows it as the reply to that message (sent all the same
   * when that message is gone).
   */
  readonly sendOne: (
    chatId: number,
    text: string,
    keyboard?: InlineKeyboardMarkup,
    replyTo?: number
  ) => Effect.Effect<number, TelegramError>
  /** Replaces a message's text; without `keyboard` its buttons go. */
  readonly edit: (
    chatId: number,
    messageId: number,
    text: string,
    keyboard?: InlineKeyboardMarkup
  ) => Effect.Effect<void>
  /** Deletes a message the bot sent; whether it went (a failure is logged). */
  readonly remove: (chatId: number, messageId: number) => Effect.Effect<boolean>
  readonly answerCallback: (queryId: string, text: string) => Effect.Effect<void>
  readonly typing: (chatId: number) => Effect.Effect<void>
  readonly api: Api
}

export const makeOutbox = (api: Api) =>
  Effect.gen(function*() {
    const buckets = new Map<string, Bucket>()
    const lock = yield* Effect.makeSemaphore(1)

    /** Waits for a token of the chat's bucket and of the global one. */
    const paced = (chatId: number) =>
      lock.withPermits(1)(Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const global = takeToken(buckets.get("*"), globalRate, now)
        const chat = takeToken(buckets.get(String(chatId)), chatId < 0 ? groupRate : privateRate, now)
        buckets.set("*", global.bucket)
        buckets.set(String(chatId), chat.bucket)
        return Math.max(global.waitMs, chat.waitMs)
      })).pipe(Effect.flatMap((waitMs) => waitMs > 0 ? Effect.sleep(Duration.millis(waitMs)) : Effect.void))

    const call = <A>(chatId: number, method: string, run: (signal: ApiSignal) => Promise<A>, retry?: RetryOptions) =>
      Effect.zipRight(paced(chatId), callApi(method, run, retry))

    const logged = (what: string) => (error: TelegramError) =>
      Effect.logWarning(`telegram: ${what} failed: ${error.reason} ${error.code ?? ""} ${error.message}`)

    /** One message: plain, or with buttons, entities, as the reply to another (sent anyway when that is gone). */
    const send = (
      chatId: number,
      text: string,
      options: {
        readonly keyboard?: InlineKeyboardMarkup | undefined
        readonly replyTo?: number | undefined
        readonly entities?: ReadonlyArray<TgEntity> | undefined
      }
    ) =>
      Effect.map(
        call(chatId, "sendMessage", (signal) =>
          api.sendMessage(chatId, wellFormed(text), {
            link_preview_options: { is_disabled: true },
            ...(options.keyboard === undefined ? {} : { reply_markup: options.keyboard }),
            ...(options.entities === undefined ? {} : { entities: options.entities.map(toMessageEntity) }),
            ...(options.replyTo === undefined
              ? {}
              : { reply_parameters: { message_id: options.replyTo, allow_sending_without_reply: true } })
          }, signal)),
        (message) => message.message_id
      )

    const sendOne: Outbox["sendOne"] = (chatId, text, keyboard, replyTo) => send(chatId, text, { keyboard, replyTo })

    /** The first part is the reply when there is one: the rest follows it. */
    const sendText: Outbox["sendText"] = (chatId, text, replyTo) =>
      Effect.forEach(
        splitMessage(text),
        (part, i) => sendOne(chatId, part, undefined, i === 0 ? replyTo : undefined),
        { discard: true }
      ).pipe(
        Effect.as(true),
        Effect.catchAll((error) => Effect.as(logged(`sending to chat ${chatId}`)(error), false))
      )

    const sendAnswer: Outbox["sendAnswer"] = (chatId, markdown, replyTo) =>
      Effect.forEach(
        splitFormatted(markdownToEntities(markdown)),
        (part, i) => {
          const reply = i === 0 ? replyTo : undefined
          return part.entities.length === 0
            ? sendOne(chatId, part.text, undefined, reply)
            : send(chatId, part.text, { entities: part.entities, replyTo: reply }).pipe(
              Effect.catchIf(
                (error) => error.reason === "Refused" && error.code === 400,
                (error) =>
                  Effect.zipRight(
                    logged(`a formatted message to chat ${chatId} (sent again as plain text)`)(error),
                    sendOne(chatId, part.text, undefined, reply)
                  )
              )
            )
        },
        { discard: true }
      ).pipe(
        Effect.as(true),
        Effect.catchAll((error) => Effect.as(logged(`sending to chat ${chatId}`)(error), false))
      )

    const edit: Outbox["edit"] = (chatId, messageId, text, keyboard) =>
      call(chatId, "editMessageText", (signal) =>
        api.editMessageText(
          chatId,
          messageId,
          wellFormed(splitMessage(text)[0]!),
          keyboard === undefined ? {} : { reply_markup: keyboard },
          signal
        )).pipe(Effect.asVoid, Effect.catchAll(logged(`editing message ${messageId} in chat ${chatId}`)))

    const remove: Outbox["remove"] = (chatId, messageId) =>
      call(chatId, "deleteMessage", (signal) => api.deleteMessage(chatId, messageId, signal)).pipe(
        Effect.as(true),
        Effect.catchAll((error) => Effect.as(logged(`deleting message ${messageId} in chat ${chatId}`)(error), false))
      )

    const answerCallback: Outbox["answerCallback"] = (queryId, text) =>
      callApi("answerCallbackQuery", (signal) => api.answerCallbackQuery(queryId, { text: wellFormed(text) }, signal))
        .pipe(
          Effect.asVoid,
          Effect.catchAll(logged("answering a button press"))
        )

    const typing: Outbox["typing"] = (chatId) =>
      call(
        chatId,
        "sendChatAction",
        (signal) => api.sendChatAction(chatId, "typing", {}, signal),
        { retries: 0, rateLimitRetries: 0 }
      ).pipe(Effect.asVoid, Effect.catchAll(logged(`the typing action in chat ${chatId}`)))

    return { sendText, sendAnswer, sendOne, edit, remove, answerCallback, typing, api } satisfies Outbox
  })

/** The message id, when a send worked. */
export const sentId = (sent: Effect.Effect<number, TelegramError>) =>
  Effect.map(Effect.either(sent), (either) => either._tag === "Right" ? Option.some(either.right) : Option.none())
