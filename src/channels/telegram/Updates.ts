import { Either, ParseResult, Schema } from "effect"
import { onFirstCall } from "../../domain/OnFirstCall.js"

/** The parts of the Bot API's objects the channel reads; other fields are ignored, missing ones make it malformed. */
export const TgUser = Schema.Struct({
  id: Schema.Int,
  is_bot: Schema.optional(Schema.Boolean),
  username: Schema.optional(Schema.String),
  first_name: Schema.optional(Schema.String)
})
export type TgUser = typeof TgUser.Type

export const TgChat = Schema.Struct({ id: Schema.Int, type: Schema.String })

export const TgDocument = Schema.Struct({
  file_id: Schema.String,
  file_unique_id: Schema.optional(Schema.String),
  file_name: Schema.optional(Schema.String),
  mime_type: Schema.optional(Schema.String),
  file_size: Schema.optional(Schema.Number)
})
export type TgDocument = typeof TgDocument.Type

export const TgPhotoSize = Schema.Struct({
  file_id: Schema.String,
  file_unique_id: Schema.optional(Schema.String),
  width: Schema.optional(Schema.Number),
  height: Schema.optional(Schema.Number),
  file_size: Schema.optional(Schema.Number)
})

export const TgMessage = Schema.Struct({
  message_id: Schema.Int,
  from: Schema.optional(TgUser),
  chat: TgChat,
  date: Schema.optional(Schema.Number),
  text: Schema.optional(Schema.String),
  caption: Schema.optional(Schema.String),
  document: Schema.optional(TgDocument),
  photo: Schema.optional(Schema.Array(TgPhotoSize)),
  /** Set on each part of an album (files sent together): Telegram sends every part as its own message. */
  media_group_id: Schema.optional(Schema.String),
  /** Its context, read leniently where it is used: a shape not foreseen never makes the message malformed. */
  entities: Schema.optional(Schema.Unknown),
  caption_entities: Schema.optional(Schema.Unknown),
  forward_origin: Schema.optional(Schema.Unknown),
  /** What the owner may send that the channel does not read (told so); anything else without text is a service message. */
  voice: Schema.optional(Schema.Unknown),
  audio: Schema.optional(Schema.Unknown),
  video: Schema.optional(Schema.Unknown),
  video_note: Schema.optional(Schema.Unknown),
  animation: Schema.optional(Schema.Unknown),
  sticker: Schema.optional(Schema.Unknown),
  location: Schema.optional(Schema.Unknown),
  venue: Schema.optional(Schema.Unknown),
  contact: Schema.optional(Schema.Unknown),
  poll: Schema.optional(Schema.Unknown),
  dice: Schema.optional(Schema.Unknown),
  story: Schema.optional(Schema.Unknown),
  reply_to_message: Schema.optional(Schema.Unknown),
  quote: Schema.optional(Schema.Unknown)
})
export type TgMessage = typeof TgMessage.Type

export const TgCallbackQuery = Schema.Struct({
  id: Schema.String,
  from: TgUser,
  data: Schema.optional(Schema.String),
  message: Schema.optional(Schema.Struct({ message_id: Schema.Int, chat: TgChat }))
})
export type TgCallbackQuery = typeof TgCallbackQuery.Type

const TgUpdate = Schema.Struct({
  update_id: Schema.Int,
  message: Schema.optional(TgMessage),
  /** A message changed by its author: the new version, whole. */
  edited_message: Schema.optional(TgMessage),
  callback_query: Schema.optional(TgCallbackQuery)
})

/** What an update is to the channel. */
export type Incoming =
  | { readonly _tag: "Message"; readonly updateId: number; readonly message: TgMessage }
  | { readonly _tag: "Edited"; readonly updateId: number; readonly message: TgMessage }
  | { readonly _tag: "Callback"; readonly updateId: number; readonly query: TgCallbackQuery }
  | { readonly _tag: "Ignored"; readonly updateId: number | undefined; readonly why: string }

const decode = onFirstCall(() => Schema.decodeUnknownEither(TgUpdate, { errors: "all" }))

/** The fields of a malformed update that are wrong, by path only (never their values: they may be private text). */
const badPaths = (error: ParseResult.ParseError): string =>
  [...new Set(ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => issue.path.join(".") || "(root)"))]
    .join(", ")

/** The `update_id` of a raw update when it has one (offsets advance past malformed updates too). */
export const updateIdOf = (raw: unknown): number | undefined => {
  if (typeof raw !== "object" || raw === null) return undefined
  const id = (raw as { readonly update_id?: unknown }).update_id
  return typeof id === "number" && Number.isSafeInteger(id) ? id : undefined
}

/** A raw update as the channel sees it: a message, a button press, or ignored with the reason (for the log). */
export const classify = (raw: unknown): Incoming => {
  const decoded = decode(raw)
  if (Either.isLeft(decoded)) {
    return {
      _tag: "Ignored",
      updateId: updateIdOf(raw),
      why: `malformed update (bad fields: ${badPaths(decoded.left)})`
    }
  }
  const update = decoded.right
  if (update.message !== undefined) return { _tag: "Message", updateId: update.update_id, message: update.message }
  if (update.edited_message !== undefined) {
    return { _tag: "Edited", updateId: update.update_id, message: update.edited_message }
  }
  if (update.callback_query !== undefined) {
    return { _tag: "Callback", updateId: update.update_id, query: update.callback_query }
  }
  const kinds = typeof raw === "object" && raw !== null ? Object.keys(raw).filter((key) => key !== "update_id") : []
  return {
    _tag: "Ignored",
    updateId: update.update_id,
    why: `unhandled update type ${kinds.map((kind) => kind.replace(/[^\w]/g, "?").slice(0, 40)).join(", ") || "(none)"}`
  }
}

/** Whether the message is something a person sent (media the channel does not read included), not a service one. */
export const isSentContent = (message: TgMessage): boolean =>
  message.text !== undefined || message.caption !== undefined || message.document !== undefined ||
  message.photo !== undefined || message.voice !== undefined || message.audio !== undefined ||
  message.video !== undefined || message.video_note !== undefined || message.animation !== undefined ||
  message.sticker !== undefined || message.location !== undefined || message.venue !== undefined ||
  message.contact !== undefined || message.poll !== undefined || message.dice !== undefined ||
  message.story !== undefined
