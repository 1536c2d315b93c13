import { Schema } from "effect"

const PositiveInt = Schema.Int.pipe(Schema.positive())
const withDefault = <S extends Schema.Schema.AnyNoContext>(schema: S, value: () => Schema.Schema.Type<S>) =>
  Schema.optionalWith(schema, { default: value })

const HttpUrl = Schema.String.pipe(
  Schema.filter((url) => /^https?:\/\/[^\s/]+/.test(url) || "expected an http:// or https:// URL"),
  Schema.transform(Schema.String, { decode: (url) => url.replace(/\/+$/, ""), encode: (url) => url })
)

const EnvName = Schema.String.pipe(Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]*$/, {
  message: () => "expected the name of an environment variable (the secret itself never goes in this file)"
}))

/** Webhook mode: Telegram posts updates to `url`; myclaw's HTTP server serves `path` and checks the secret token. */
export const TelegramWebhook = Schema.Struct({
  url: HttpUrl,
  /** Where the secret token Telegram echoes in `X-Telegram-Bot-Api-Secret-Token` is (never in this file). */
  secretTokenEnv: withDefault(EnvName, () => "TELEGRAM_WEBHOOK_SECRET"),
  path: withDefault(Schema.String.pipe(Schema.pattern(/^\/[\w/-]{1,200}$/)), () => "/telegram/webhook")
})
export type TelegramWebhook = typeof TelegramWebhook.Type

/**
 * The `telegram` section of myclaw.json; the channel is on when TELEGRAM_BOT_TOKEN is set. Who may talk to the
 * bot is listed here (numeric Telegram user ids); MYCLAW_TELEGRAM_API_ROOT overrides `apiRoot`.
 */
export const TelegramConfig = Schema.Struct({
  /** Another Bot API server (a self-hosted one); default Telegram's. */
  apiRoot: Schema.optional(HttpUrl),
  allowedUserIds: withDefault(Schema.Array(Schema.Int), () => []),
  /** Messages in group chats are ignored unless this is on. */
  allowGroups: withDefault(Schema.Boolean, () => false),
  /** Long-polling timeout asked of getUpdates. */
  pollTimeoutSeconds: withDefault(Schema.Int.pipe(Schema.between(0, 50)), () => 30),
  /** getUpdates silent for longer than this (beyond its own timeout) means a stalled poll: polling restarts. */
  watchdogGraceSeconds: withDefault(PositiveInt, () => 30),
  /** Largest document or photo saved under inbox/. */
  inboxMaxBytes: withDefault(PositiveInt, () => 20 * 1024 * 1024),
  /** A turn running longer than this shows a progress message, edited in place. */
  progressAfterMs: withDefault(PositiveInt, () => 5_000),
  webhook: Schema.optional(TelegramWebhook)
})
export type TelegramConfig = typeof TelegramConfig.Type

export const defaultTelegramConfig = (): TelegramConfig => Schema.decodeUnknownSync(TelegramConfig)({})
