import { Effect, Layer } from "effect"
import { TerminalAnswering } from "../channels/cli/TerminalApprovals.js"
import { TelegramLive } from "../channels/telegram/Live.js"
import { HttpLive } from "../http/Server.js"
import { ChannelStatesLive } from "../layers/ChannelStatesLive.js"
import * as Compose from "../layers/Compose.js"
import { MainLayer } from "../layers/Main.js"
import { OwnerNoticesLive } from "../layers/OwnerNoticesLive.js"
import { TelemetryLive } from "../layers/Telemetry.js"
import { BackupScheduleLive } from "../programs/BackupSchedule.js"
import { DigestScheduleLive } from "../programs/Digest.js"

/** The HTTP server, with the Telegram channel (on with TELEGRAM_BOT_TOKEN; its webhook route when configured). */
const HttpWithTelegram = HttpLive.pipe(Compose.provide(TelegramLive))

/**
 * `myclaw serve`: the schedules, the terminal's approvals and the HTTP server, until interrupted. The server is
 * built last, so that it listens once the rest is up (an answer from /health means the whole service is), and is
 * closed first (turns in flight drain while the rest still runs).
 */
export const serve = Layer.launch(
  Compose.mergeAll(DigestScheduleLive, BackupScheduleLive, TerminalAnswering, HttpWithTelegram).pipe(
    Compose.provide(Compose.merge(OwnerNoticesLive, ChannelStatesLive)),
    Compose.provide(MainLayer)
  )
).pipe(Effect.provide(TelemetryLive))
