import * as NodeFs from "node:fs/promises"

/**
 * What myclaw keeps (the conversations, traces, audit log, state, undo copies and backups) is readable by its owner
 * alone, whatever the umask: the files it makes are 0600 and the folders it makes 0700. A folder that already
 * exists keeps the mode its owner gave it. The files the agent's tools write for the owner are the owner's, made
 * with the umask as any editor makes them.
 */
export const OWNER_FILE = 0o600
export const OWNER_FOLDER = 0o700

/**
 * An SQLite database and the files SQLite keeps beside it, made owner-only once it is open: SQLite creates its
 * journal, WAL and shared-memory files with the database's own mode, and a database an earlier version made with
 * the umask is tightened here. A file that cannot be changed (not there, a read-only file system) is left as it is.
 */
export const ownerOnlyDatabase = (file: string): Promise<void> =>
  Promise.all(
    ["", "-journal", "-wal", "-shm"].map((suffix) => NodeFs.chmod(file + suffix, OWNER_FILE).catch(() => undefined))
  ).then(() => undefined)
