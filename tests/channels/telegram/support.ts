import { ConfigProvider, Effect, Layer, Logger } from "effect"
import { TelegramLive } from "../../../src/channels/telegram/Live.js"
import type { TelegramConfig } from "../../../src/domain/TelegramConfig.js"
import { TestLayer, type TestOptions } from "../../../src/layers/Test.js"
import { type FakeBotApi, OWNER, TOKEN } from "./FakeBotApi.js"

/**
 * The test graph routed as in production (no scripted owner), the owner allowed on Telegram. The progress message
 * is held back for an hour unless a test asks for it, so that moving the clock does not add messages.
 */
export const telegramGraph = (options: TestOptions & { readonly telegram?: Partial<typeof TelegramConfig.Encoded> }) =>
  TestLayer({
    scriptedOwner: false,
    ...options,
    config: {
      ...options.config,
      telegram: { allowedUserIds: [OWNER.id], progressAfterMs: 3_600_000, ...options.telegram }
    }
  })

/** Starts the channel as `serve` does (TelegramLive), pointed at the fake server through the environment. */
export const startBot = (fake: FakeBotApi, env: Record<string, string> = {}) =>
  Layer.build(TelegramLive).pipe(
    Effect.withConfigProvider(ConfigProvider.fromJson({
      TELEGRAM_BOT_TOKEN: TOKEN,
      MYCLAW_TELEGRAM_API_ROOT: fake.apiRoot,
      ...env
    })),
    Effect.asVoid
  )

/** Log lines, as text, for the rest of the test. */
export const captureLogs = () => {
  const lines: Array<string> = []
  const logger = Logger.make(({ message }) => {
    lines.push((Array.isArray(message) ? message : [message]).map((part) => String(part)).join(" "))
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}

export const textOf = (payload: Record<string, unknown>): string => String(payload.text)
