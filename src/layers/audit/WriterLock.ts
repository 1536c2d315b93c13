import { Data, Duration, Effect, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import { existsSync, unlinkSync } from "node:fs"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { AuditError, messageOf } from "../../domain/Errors.js"

/**
 * One writing process at a time per audit folder: two writers would each extend the chains from their own
 * view and break them. `writer.lock` names its holder by more than a pid, because pids come back: a service
 * restarted in a container is pid 1 again, and after a reboot a dead writer's pid may belong to anyone. The
 * holder is `{pid, start, boot, token}`: the process's start time (from /proc, in clock ticks since boot), the
 * kernel's boot id and a random token for this acquisition. A lock is held only while a process with that pid,
 * that start time and that boot is alive, and, for this very process, while this process holds that token;
 * anything else is a crash's leftover and is taken over.
 */
export const LOCK_FILE = "writer.lock"

/**
 * Written by a process waiting for the lock, before each new attempt; the holder lets the folder go after
 * the batch it is writing when it sees it (and removes it), so a CLI turn beside a busy `serve` takes its
 * turn within a batch instead of starving until `serve` is idle.
 */
export const WAIT_FILE = "writer.wait"

/**
 * After handing the folder over, gives the waiting process the time to take it (up to `ms`, polled on the
 * real clock): without it, the holder's next batch would take the lock back before the waiter's next attempt,
 * and a busy writer would starve it anyway.
 */
export const awaitTaker = (auditDir: string, ms = 250) =>
  Effect.promise(async () => {
    const lock = NodePath.join(auditDir, LOCK_FILE)
    for (let waited = 0; waited < ms && !existsSync(lock); waited += 5) {
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  })

/** Whether another process asked for the lock; the request is consumed. */
export const handoffRequested = (auditDir: string): boolean => {
  const path = NodePath.join(auditDir, WAIT_FILE)
  if (!existsSync(path)) return false
  try {
    unlinkSync(path)
  } catch {
    // Another holder consumed it first; the request was still made.
  }
  return true
}

export interface Holder {
  readonly pid: number
  /** Start time of the process in clock ticks since boot; absent where /proc is not available. */
  readonly start?: number | undefined
  readonly boot?: string | undefined
  readonly token?: string | undefined
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const readOr = async (path: string) => {
  try {
    return (await NodeFs.readFile(path, "utf8")).trim()
  } catch {
    return undefined
  }
}

/** The start time of a process (field 22 of /proc/<pid>/stat, after the parenthesised command name). */
export const processStart = async (pid: number): Promise<number | undefined> => {
  const stat = await readOr(`/proc/${pid}/stat`)
  if (stat === undefined) return undefined
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  const start = Number(fields[19])
  return Number.isSafeInteger(start) ? start : undefined
}

export const bootId = () => readOr("/proc/sys/kernel/random/boot_id")

/** Tokens of the locks this process holds now. */
const heldHere = new Set<string>()

const parseHolder = (text: string): Holder | undefined => {
  const trimmed = text.trim()
  // A bare pid: the lock of an older myclaw.
  if (/^\d+$/.test(trimmed)) return { pid: Number(trimmed) }
  try {
    const value: unknown = JSON.parse(trimmed)
    if (typeof value !== "object" || value === null) return undefined
    const { boot, pid, start, token } = value as Record<string, unknown>
    if (typeof pid !== "number" || !Number.isSafeInteger(pid) || pid <= 0) return undefined
    return {
      pid,
      start: typeof start === "number" ? start : undefined,
      boot: typeof boot === "string" ? boot : undefined,
      token: typeof token === "string" ? token : undefined
    }
  } catch {
    return undefined
  }
}

/** Whether the lock's holder is a live writer; an unreadable lock is a crash's leftover. */
const isLive = async (holder: Holder | undefined): Promise<boolean> => {
  if (holder === undefined) return false
  if (holder.pid === process.pid) return holder.token !== undefined && heldHere.has(holder.token)
  if (!alive(holder.pid)) return false
  const boot = await bootId()
  if (holder.boot !== undefined && boot !== undefined && holder.boot !== boot) return false
  if (holder.start !== undefined) {
    const start = await processStart(holder.pid)
    if (start !== undefined && start !== holder.start) return false
  }
  return true
}

const take = async (path: string, token: string): Promise<Holder | undefined> => {
  const me: Holder = { pid: process.pid, start: await processStart(process.pid), boot: await bootId(), token }
  // The lock appears whole or not at all (written aside, then linked into place): a lock seen empty between
  // its creation and its first write was once judged a crash's leftover and taken, giving two writers.
  const aside = `${path}.${process.pid}.${token.slice(0, 8)}.tmp`
  await NodeFs.writeFile(aside, JSON.stringify(me) + "\n", { mode: 0o600 })
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await NodeFs.link(aside, path)
        heldHere.add(token)
        return undefined
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      }
      const text = await readOr(path)
      if (text === undefined) continue
      const holder = parseHolder(text)
      if (holder !== undefined && await isLive(holder)) return holder
      // Removed only if unchanged since it was judged stale: a lock another process took meanwhile stays.
      if (await readOr(path) === text) await NodeFs.rm(path, { force: true })
    }
  } finally {
    await NodeFs.rm(aside, { force: true })
  }
  throw new Error("the lock keeps changing hands")
}

/** Held by another live process: waited for, and retried. */
class LockHeld extends Data.TaggedError("LockHeld")<{ readonly holder: Holder }> {}

/** How often a process waiting for the lock tries again (and writes its request). */
export const WAIT_SPACING_MS = 25

/** How long an append waits for another process's writer to let go of the folder. */
const WAIT = { spacing: Duration.millis(WAIT_SPACING_MS), attempts: 400 }

/**
 * Takes the folder's writer lock for the scope (released when the scope closes), waiting up to 10 s for
 * another myclaw process that is writing (another instance in this process is a mistake: it fails at once).
 */
export const acquireWriterLock = (auditDir: string) => {
  const path = NodePath.join(auditDir, LOCK_FILE)
  const token = randomBytes(16).toString("hex")
  const waitFile = NodePath.join(auditDir, WAIT_FILE)
  let waited = false
  const attempt = Effect.tryPromise({
    try: async () => {
      const holder = await take(path, token)
      if (holder !== undefined && holder.pid !== process.pid) {
        waited = true
        await NodeFs.writeFile(waitFile, `${process.pid}\n`)
      } else if (waited) {
        waited = false
        await NodeFs.rm(waitFile, { force: true })
      }
      return holder
    },
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
  const held = (holder: Holder) =>
    new AuditError({
      path,
      reason: "Locked",
      message: holder.pid === process.pid
        ? "the audit log is already open for writing in this process: open it once"
        : `the audit log is being written by process ${holder.pid} and was not released within 10 s ` +
          `(if no myclaw process is running, remove ${path})`
    })
  return Effect.acquireRelease(
    attempt.pipe(
      Effect.retry({
        schedule: Schedule.spaced(WAIT.spacing),
        times: WAIT.attempts,
        while: (error) => error._tag === "LockHeld" && error.holder.pid !== process.pid
      }),
      Effect.catchTag("LockHeld", (error) => Effect.fail(held(error.holder)))
    ),
    () =>
      Effect.promise(async () => {
        heldHere.delete(token)
        const holder = parseHolder(await readOr(path) ?? "")
        if (holder?.token === token) await NodeFs.rm(path, { force: true })
      })
  )
}
