import { Data, Duration, Effect, Schedule } from "effect"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { AuditError, messageOf } from "../../domain/Errors.js"

/**
 * One writing process at a time per audit folder: two writers would each extend the chains from their own
 * view and break them. `writer.lock` holds the writer's pid while it writes; a lock whose process is gone (a
 * crash) is taken over.
 */
export const LOCK_FILE = "writer.lock"

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const take = async (path: string): Promise<number | undefined> => {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = await NodeFs.open(path, "wx", 0o600)
      await handle.writeFile(`${process.pid}\n`)
      await handle.close()
      return undefined
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    }
    const holder = Number.parseInt(await NodeFs.readFile(path, "utf8").catch(() => ""), 10)
    if (Number.isSafeInteger(holder) && holder > 0 && alive(holder)) return holder
    await NodeFs.rm(path, { force: true })
  }
  throw new Error("the lock keeps changing hands")
}

/** Held by another live process: waited for, and retried. */
class LockHeld extends Data.TaggedError("LockHeld")<{ readonly holder: number }> {}

/** How long an append waits for another process's writer to let go of the folder. */
const WAIT = { spacing: Duration.millis(25), attempts: 400 }

/**
 * Takes the folder's writer lock for the scope (released when the scope closes), waiting up to 10 s for
 * another myclaw process that is writing (another instance in this process is a mistake: it fails at once).
 */
export const acquireWriterLock = (auditDir: string) => {
  const path = NodePath.join(auditDir, LOCK_FILE)
  const attempt = Effect.tryPromise({
    try: () => take(path),
    catch: (error) =>
      new AuditError({
        path,
        reason: "Io",
        message: `cannot lock the audit log for writing: ${messageOf(error)}`,
        cause: error
      })
  }).pipe(
    Effect.flatMap((holder) => holder === undefined ? Effect.void : Effect.fail(new LockHeld({ holder })))
  )
  const held = (holder: number) =>
    new AuditError({
      path,
      reason: "Locked",
      message: holder === process.pid
        ? "the audit log is already open for writing in this process: open it once"
        : `the audit log is being written by process ${holder} and was not released within 10 s`
    })
  return Effect.acquireRelease(
    attempt.pipe(
      Effect.retry({
        schedule: Schedule.spaced(WAIT.spacing),
        times: WAIT.attempts,
        while: (error) => error._tag === "LockHeld" && error.holder !== process.pid
      }),
      Effect.catchTag("LockHeld", (error) => Effect.fail(held(error.holder)))
    ),
    () =>
      Effect.promise(async () => {
        const holder = await NodeFs.readFile(path, "utf8").catch(() => "")
        if (holder.trim() === String(process.pid)) await NodeFs.rm(path, { force: true })
      })
  )
}
