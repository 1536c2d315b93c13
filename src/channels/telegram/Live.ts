import { Config, Console, Effect, Layer, Option, Redacted } from "effect"
import { ConfigFileError } from "../../domain/Errors.js"
import { MyclawConfig } from "../../services/MyclawConfig.js"
import type { TelegramChannel, TelegramSettings } from "./Channel.js"
import { isValidSecretToken, makeWebhookRoute, TelegramWebhookRoute } from "./Webhook.js"

/** TELEGRAM_BOT_TOKEN turns the channel on; MYCLAW_TELEGRAM_API_ROOT points it at another Bot API server. */
export const TelegramEnv = Config.all({
  token: Config.option(Config.redacted("TELEGRAM_BOT_TOKEN")),
  apiRoot: Config.option(Config.string("MYCLAW_TELEGRAM_API_ROOT"))
})

/** The channel's code (grammY with it), loaded only when the channel is on: a service without it starts faster. */
const loadChannel = Effect.promise(() => Promise.all([import("./Api.js"), import("./Channel.js")]))

const showPairingCode = (channel: TelegramChannel) =>
  Effect.gen(function*() {
    if (Option.isNone(channel.pairingCode)) return
    // On the terminal only, never in the service's log: whoever sends it first becomes the owner.
    yield* Console.error(
      `myclaw: Telegram has no owner yet. Send this to the bot from your account, once: /pair ${channel.pairingCode.value}`
    )
    yield* Effect.logWarning(
      "telegram: no owner yet: a pairing code is shown on the terminal (telegram.allowedUserIds)"
    )
  })

/** Webhook mode: Telegram posts updates to `webhook.url`, which reaches this server's `webhook.path`. */
const startWebhook = (settings: TelegramSettings, file: string) =>
  Effect.gen(function*() {
    const webhook = settings.config.webhook!
    const secret = yield* Effect.orDie(Config.option(Config.redacted(webhook.secretTokenEnv)))
    if (Option.isNone(secret) || !isValidSecretToken(Redacted.value(secret.value))) {
      return yield* new ConfigFileError({
        file,
        reason: "Environment",
        message: `telegram.webhook needs a secret token in ${webhook.secretTokenEnv} (1 to 256 of A-Z a-z 0-9 _ -)`
      })
    }
    const [{ callApi }, { makeTelegramChannel }] = yield* loadChannel
    const channel = yield* makeTelegramChannel(settings)
    yield* callApi("setWebhook", (signal) =>
      channel.api.setWebhook(webhook.url, {
        secret_token: Redacted.value(secret.value),
        allowed_updates: ["message", "edited_message", "callback_query"]
      }, signal)).pipe(
        Effect.zipRight(Effect.logInfo(`telegram: webhook set; updates come to ${webhook.path}`)),
        Effect.zipRight(channel.working("webhook")),
        Effect.catchAll((error) =>
          Effect.zipRight(Effect.logError(`telegram: setWebhook failed: ${error.message}`), channel.failing(error))
        )
      )
    yield* showPairingCode(channel)
    return makeWebhookRoute(channel, webhook.path as `/${string}`, secret.value)
  })

/**
 * The Telegram channel of `myclaw serve`: on when TELEGRAM_BOT_TOKEN is set, for the life of the service; long
 * polling, or with `telegram.webhook` the route the HTTP server adds for Telegram's posts.
 */
export const TelegramLive = Layer.scoped(
  TelegramWebhookRoute,
  Effect.gen(function*() {
    const env = yield* Effect.orDie(TelegramEnv)
    const token = Option.filter(env.token, (token) => Redacted.value(token).trim() !== "")
    if (Option.isNone(token)) {
      yield* Effect.logDebug("telegram: off (TELEGRAM_BOT_TOKEN is not set)")
      return Option.none()
    }
    const { config, file } = yield* MyclawConfig
    const settings: TelegramSettings = {
      token: token.value,
      apiRoot: Option.getOrUndefined(Option.map(env.apiRoot, (root) => root.replace(/\/+$/, ""))) ??
        config.telegram.apiRoot,
      config: config.telegram
    }
    if (config.telegram.webhook !== undefined) return Option.some(yield* startWebhook(settings, file))
    const [, { startTelegramPolling }] = yield* loadChannel
    yield* showPairingCode(yield* startTelegramPolling(settings))
    return Option.none()
  })
)
