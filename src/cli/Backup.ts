import { Clock, Console, Effect, Either } from "effect"
import { backup, backupDestination } from "../programs/Backup.js"
import { MyclawConfig } from "../services/MyclawConfig.js"
import { Workspace } from "../services/Workspace.js"

/** `myclaw backup [--dest DIR]`: one backup now, then the retention; prints the file. Exit 1 on failure. */
export const backupCommand = (options: { readonly dest?: string | undefined }) =>
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const { config, file } = yield* MyclawConfig
    const dest = backupDestination({
      dest: options.dest,
      configured: config.backup.dest,
      configFile: file,
      workspace: workspace.root
    })
    const now = yield* Clock.currentTimeMillis
    const result = yield* Effect.either(backup({ workspace: workspace.root, dest, now }))
    if (Either.isLeft(result)) {
      yield* Console.error(`myclaw: backup ${result.left.path}: ${result.left.message}`)
      return 1
    }
    yield* Console.log(result.right.file)
    if (result.right.removed.length > 0) {
      yield* Console.error(`[retention: removed ${result.right.removed.join(", ")}]`)
    }
    return 0
  })
