import { Config, Console, Effect, Layer, Option, Redacted } from "effect"
import { MyclawConfig } from "../../services/MyclawConfig.js"
import { startTelegramPolling } from "./Channel.js"

/** TELEGRAM_BOT_TOKEN turns the channel on; MYCLAW_TELEGRAM_API_ROOT points it at another Bot API server. */
export const TelegramEnv = Config.all({
  token: Config.option(Config.redacted("TELEGRAM_BOT_TOKEN")),
  apiRoot: Config.option(Config.string("MYCLAW_TELEGRAM_API_ROOT"))
})

/** The Telegram channel of `myclaw serve`: on when TELEGRAM_BOT_TOKEN is set, for the life of the service. */
export const TelegramLive = Layer.scopedDiscard(Effect.gen(function*() {
  const env = yield* Effect.orDie(TelegramEnv)
  const token = Option.filter(env.token, (token) => Redacted.value(token).trim() !== "")
  if (Option.isNone(token)) {
    return yield* Effect.logDebug("telegram: off (TELEGRAM_BOT_TOKEN is not set)")
  }
  const { config } = yield* MyclawConfig
  const telegram = config.telegram
  const channel = yield* startTelegramPolling({
    token: token.value,
    apiRoot: Option.getOrUndefined(Option.map(env.apiRoot, (root) => root.replace(/\/+$/, ""))) ?? telegram.apiRoot,
    config: telegram
  })
  if (Option.isSome(channel.pairingCode)) {
    // On the terminal only, never in the service's log: whoever sends it first becomes the owner.
    yield* Console.error(
      `myclaw: Telegram has no owner yet. Send this to the bot from your account, once: /pair ${channel.pairingCode.value}`
    )
    yield* Effect.logWarning(
      "telegram: no owner yet: a pairing code is shown on the terminal (telegram.allowedUserIds)"
    )
  }
}))
