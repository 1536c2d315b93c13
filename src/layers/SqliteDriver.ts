import { createRequire } from "node:module"

/**
 * The file Node loads for `better-sqlite3`, the driver under `@effect/sql-sqlite-node`, resolved from here: a worker
 * thread started from code it is given as text resolves nothing relative to myclaw, so it is handed this path. (The
 * bundled command line replaces this module with the same resolution through its own `require`.)
 */
export const sqliteDriverPath = (): string => createRequire(import.meta.url).resolve("better-sqlite3")
