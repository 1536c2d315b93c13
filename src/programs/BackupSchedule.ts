import { Cause, Clock, Effect, Layer, Option } from "effect"
import { MyclawConfig } from "../services/MyclawConfig.js"
import { OwnerNotices } from "../services/OwnerNotices.js"
import { Workspace } from "../services/Workspace.js"
import { backup, backupDestination } from "./Backup.js"
import { everyDay } from "./Daily.js"

/**
 * `myclaw serve` makes a backup every day at `backup.dailyAt` in the budget's time zone, keeping 30 daily and 12
 * monthly ones, for as long as the layer lives. A failure is logged and told to the owner on their channels.
 */
export const BackupScheduleLive = Layer.scopedDiscard(Effect.gen(function*() {
  const { config, file } = yield* MyclawConfig
  const workspace = yield* Workspace
  const dailyAt = config.backup.dailyAt
  if (dailyAt === null) return yield* Effect.logInfo("daily backup off: backup.dailyAt is null")
  const dest = backupDestination({ configured: config.backup.dest, configFile: file, workspace: workspace.root })
  const notices = yield* OwnerNotices
  const once = Effect.flatMap(Clock.currentTimeMillis, (now) =>
    backup({ workspace: workspace.root, dest, now }).pipe(
      Effect.tap((result) => Effect.logInfo(`daily backup written: ${result.file}`)),
      // A backup that silently stopped is found the day it is needed: the owner hears of each failure.
      Effect.tapErrorCause((cause) =>
        notices.notify(
          `myclaw: the daily backup failed: ${
            Cause.failureOption(cause).pipe(Option.match({
              onNone: () => "an internal error (it is in the service's log)",
              onSome: (error) => `${error.message} (${error.path})`
            }))
          }`
        )
      )
    ))
  yield* Effect.forkScoped(everyDay(dailyAt, config.budget.timeZone, "daily backup", once))
}))
