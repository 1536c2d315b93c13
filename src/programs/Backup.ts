import { Effect } from "effect"
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { BackupError } from "../domain/BackupError.js"
import { messageOf } from "../domain/Errors.js"
import { syncPath } from "../domain/FileSync.js"
import { OWNER_FILE, OWNER_FOLDER } from "../domain/OwnerOnly.js"
import { isInside } from "../domain/Paths.js"

/**
 * The workspace backup: `workspace-YYYYMMDD-HHMM.tar.gz` (UTC) made with the system's
 * `tar`, restorable with a plain `tar xzf`, then the retention applied to the destination folder. The
 * derived audit index and the writer's lock are left out: both are rebuilt or retaken on the restored copy.
 */
const BACKUP_NAME = /^workspace-(\d{8})-(\d{4})\.tar\.gz$/
const LEFT_OUT = [".audit/index.sqlite", ".audit/index.sqlite-wal", ".audit/index.sqlite-shm", ".audit/writer.lock"]
/** Names left out wherever they are: the temporary file of an atomic write whose process died before the rename. */
const LEFT_OUT_NAMES = ["*.tmp"]

/** The note every backup carries about what it leaves out and how to restore. */
export const BACKUP_NOTE = "BACKUP-README.txt"
const backupNote = `This is a myclaw workspace backup. It does not contain:
- the audit keys (MYCLAW_KEY_DIR, by default .myclaw-keys/<workspace name> next to the workspace) nor the
  audit checkpoints kept with them: a key must never travel with the log it signs;
- the verification seed (audit-seed.json), which the owner keeps off the machine;
- the secret store's key (MYCLAW_SECRET_KEY or its key file): .state/secrets.json is encrypted, and a
  restored workspace needs that key, kept apart, to use its secrets;
- the audit query index (.audit/index.sqlite), rebuilt from the files on first use.

To restore: extract the workspace, point MYCLAW_HOME at it, then
  myclaw audit resume --seed /path/to/audit-seed.json
which verifies the whole log against the seed, derives today's key again and records that it did.
Until then, no turn runs: a turn that cannot be audited is refused.
`

/** `workspace-YYYYMMDD-HHMM.tar.gz` for an instant, in UTC. */
export const backupName = (millis: number): string => {
  const iso = new Date(millis).toISOString()
  return `workspace-${iso.slice(0, 10).replaceAll("-", "")}-${iso.slice(11, 16).replace(":", "")}.tar.gz`
}

export interface RetentionPolicy {
  readonly daily: number
  readonly monthly: number
}

/**
 * Which backups to keep, from their names alone: the newest of each of the last `daily` days that have
 * one, and the first of each of the last `monthly` months that have one (30 daily, 12 monthly by default).
 * Names that are not backups are neither kept nor removed.
 */
export const retention = (
  names: ReadonlyArray<string>,
  policy: RetentionPolicy = { daily: 30, monthly: 12 }
): { readonly keep: ReadonlyArray<string>; readonly remove: ReadonlyArray<string> } => {
  const backups = names.filter((name) => BACKUP_NAME.test(name)).sort()
  const keep = new Set<string>()
  const newestOfDay = new Map<string, string>()
  const firstOfMonth = new Map<string, string>()
  for (const name of backups) {
    const day = name.slice("workspace-".length, "workspace-".length + 8)
    newestOfDay.set(day, name)
    if (!firstOfMonth.has(day.slice(0, 6))) firstOfMonth.set(day.slice(0, 6), name)
  }
  for (const name of [...newestOfDay.values()].slice(-policy.daily)) keep.add(name)
  for (const name of [...firstOfMonth.values()].slice(-policy.monthly)) keep.add(name)
  return { keep: backups.filter((name) => keep.has(name)), remove: backups.filter((name) => !keep.has(name)) }
}

// Node's process module loads with the first backup, not when serve starts its schedule.
const run = (command: string, args: ReadonlyArray<string>) =>
  import("node:child_process").then(({ execFile }) =>
    new Promise<{ readonly code: number; readonly stderr: string }>((resolve, reject) => {
      execFile(command, [...args], { maxBuffer: 16 * 1024 * 1024 }, (error, _stdout, stderr) => {
        if (error === null) return resolve({ code: 0, stderr })
        if (typeof error.code === "number") return resolve({ code: error.code, stderr })
        reject(error)
      })
    })
  )

export interface BackupResult {
  readonly file: string
  readonly removed: ReadonlyArray<string>
}

/** Writes one backup of `workspace` into `dest` and applies the retention there. */
export const backup = Effect.fn("Backup.run")(function*(options: {
  readonly workspace: string
  readonly dest: string
  readonly now: number
  readonly policy?: RetentionPolicy
}) {
  const workspace = NodePath.resolve(options.workspace)
  const dest = NodePath.resolve(options.dest)
  if (isInside(workspace, dest)) {
    const message = `the backup folder must be outside the workspace ${workspace}`
    return yield* new BackupError({ path: dest, reason: "InsideWorkspace", message })
  }
  const fail = (path: string, reason: BackupError["reason"], what: string) => (error: unknown) =>
    new BackupError({ path, reason, message: `${what}: ${messageOf(error)}`, cause: error })
  yield* Effect.tryPromise({
    try: () => NodeFs.mkdir(dest, { recursive: true, mode: OWNER_FOLDER }),
    catch: fail(dest, "Io", "cannot create")
  })
  const file = NodePath.join(dest, backupName(options.now))
  // Its own name: two backups of the same minute (the daily one and the owner's) must not write one file.
  const temporary = NodePath.join(
    dest,
    `.${NodePath.basename(file)}.${process.pid}-${NodeCrypto.randomBytes(6).toString("hex")}.partial`
  )
  const base = NodePath.basename(workspace)
  // What the archive does not hold, said inside it: the note lands in the restored workspace (added last, so
  // it replaces the copy a restored workspace already holds).
  const notes = yield* Effect.tryPromise({
    try: async () => {
      const dir = await NodeFs.mkdtemp(NodePath.join(dest, ".backup-notes-"))
      await NodeFs.mkdir(NodePath.join(dir, base))
      await NodeFs.writeFile(NodePath.join(dir, base, BACKUP_NOTE), backupNote, { mode: OWNER_FILE })
      return dir
    },
    catch: fail(dest, "Io", "cannot write the backup's note")
  })
  const removeTemporary = Effect.promise(() => NodeFs.rm(temporary, { force: true }))
  // The archive holds the audit log, the traces and the state: made owner-only before tar writes into it (tar
  // keeps the mode of the file it truncates), not left to the umask.
  const result = yield* Effect.tryPromise({
    try: () => NodeFs.open(temporary, "wx", OWNER_FILE).then((handle) => handle.close()),
    catch: fail(file, "Io", "cannot create the archive")
  }).pipe(
    Effect.zipRight(Effect.tryPromise({
      try: () =>
        run("tar", [
          "-czf",
          temporary,
          "--no-wildcards",
          ...LEFT_OUT.map((path) => `--exclude=${base}/${path}`),
          "--wildcards",
          ...LEFT_OUT_NAMES.map((pattern) => `--exclude=${pattern}`),
          "--no-wildcards",
          "-C",
          NodePath.dirname(workspace),
          base,
          "-C",
          notes,
          `${base}/${BACKUP_NOTE}`
        ]),
      catch: fail(file, "Tar", "cannot run tar")
    })),
    Effect.tapError(() => removeTemporary),
    Effect.ensuring(Effect.promise(() => NodeFs.rm(notes, { recursive: true, force: true })))
  )
  // GNU tar exits 1 when a file grew while it was read (the live audit log): the archive is still whole.
  if (result.code !== 0 && !(result.code === 1 && /file changed as we read it/.test(result.stderr))) {
    yield* removeTemporary
    return yield* new BackupError({
      path: file,
      reason: "Tar",
      message: `tar failed (exit ${result.code}): ${result.stderr.trim()}`
    })
  }
  if (result.stderr.trim() !== "") yield* Effect.logWarning(`backup: tar: ${result.stderr.trim()}`)
  yield* Effect.tryPromise({
    try: async () => {
      await syncPath(temporary)
      await NodeFs.rename(temporary, file)
      await syncPath(dest)
    },
    catch: fail(file, "Io", "cannot store the backup")
  })
  const names = yield* Effect.tryPromise({
    try: () => NodeFs.readdir(dest),
    catch: fail(dest, "Retention", "cannot list")
  })
  const { remove } = retention(names, options.policy)
  for (const name of remove) {
    const path = NodePath.join(dest, name)
    yield* Effect.tryPromise({ try: () => NodeFs.rm(path), catch: fail(path, "Retention", "cannot remove") })
  }
  yield* Effect.logInfo(`backup ${file} written; ${remove.length} old backup(s) removed`)
  return { file, removed: remove } satisfies BackupResult
})

/**
 * Where backups go: `--dest`, else `backup.dest` of the configuration (relative to its file), else
 * `<workspace>/../myclaw-backups`.
 */
export const backupDestination = (options: {
  readonly dest?: string | undefined
  readonly configured?: string | undefined
  readonly configFile: string
  readonly workspace: string
}): string =>
  options.dest !== undefined
    ? NodePath.resolve(options.dest)
    : options.configured !== undefined
    ? NodePath.resolve(NodePath.dirname(options.configFile), options.configured)
    : NodePath.join(NodePath.dirname(options.workspace), "myclaw-backups")
