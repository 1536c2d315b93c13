import { SqlClient, type SqlError } from "@effect/sql"
import { Effect } from "effect"

/**
 * Makes the WAL database of the SQL client as durable as the traces (`traces.fsync`): under `batch`,
 * `synchronous = NORMAL` (no commit waits for the disk: a crash of myclaw loses nothing, a power loss may lose the
 * last commits); under `always`, `synchronous = FULL` (the log synced at every commit). Set either way: the SQLite
 * that better-sqlite3 builds makes NORMAL the default of a WAL database, so a store that set nothing under
 * `always` synced nothing at commit.
 */
export const walDurability = (
  fsync: "always" | "batch"
): Effect.Effect<void, SqlError.SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => Effect.asVoid(sql.unsafe(`PRAGMA synchronous = ${fsync === "batch" ? "NORMAL" : "FULL"}`))
  )
