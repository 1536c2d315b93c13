import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Every turn moves its session's last activity, and the index on it was one more page for each turn's record to
 * write (about a sixth of the statement's time); sessions are listed by last activity only on demand, which sorts
 * the table instead.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DROP INDEX IF EXISTS sessions_last_active`)
