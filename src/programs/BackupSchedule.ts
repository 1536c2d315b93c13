import { Clock, Cron, Duration, Effect, Layer } from "effect"
import { MyclawConfig } from "../services/MyclawConfig.js"
import { Workspace } from "../services/Workspace.js"
import { backup, backupDestination } from "./Backup.js"

/**
 * `myclaw serve` makes a backup every day at `backup.dailyAt` in the budget's time zone, with the retention of
 * seed 003 section 8, for as long as the layer lives. A failure is logged and the next day comes anyway.
 */
export const BackupScheduleLive = Layer.scopedDiscard(Effect.gen(function*() {
  const { config, file } = yield* MyclawConfig
  const workspace = yield* Workspace
  const dailyAt = config.backup.dailyAt
  if (dailyAt === null) return yield* Effect.logInfo("daily backup off: backup.dailyAt is null")
  const [hours, minutes] = dailyAt.split(":").map(Number) as [number, number]
  const cron = Cron.unsafeParse(`${minutes} ${hours} * * *`, config.budget.timeZone)
  const dest = backupDestination({ configured: config.backup.dest, configFile: file, workspace: workspace.root })
  const once = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const next = Cron.next(cron, now).getTime()
    yield* Effect.sleep(Duration.millis(next - now))
    yield* backup({ workspace: workspace.root, dest, now: next }).pipe(
      Effect.tap((result) => Effect.logInfo(`daily backup written: ${result.file}`)),
      Effect.catchAllCause((cause) => Effect.logError("daily backup failed", cause))
    )
  })
  yield* Effect.forkScoped(Effect.forever(once))
}))
