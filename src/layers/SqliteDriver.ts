import { createRequire } from "node:module"

/**
 * The file of the SQLite driver (better-sqlite3, the one `@effect/sql-sqlite-node` uses): a worker thread loads it
 * by path. The command-line bundle replaces this module with a resolution from its own files.
 */
export const sqliteDriverPath = (): string => createRequire(import.meta.url).resolve("better-sqlite3")
