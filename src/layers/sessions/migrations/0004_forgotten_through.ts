import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * When a session's turns were last forgotten (epoch milliseconds): the turns of the traces that started until
 * then are not brought back from the trace files, as the turns a stopped process had not written yet are.
 */
export default Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql`ALTER TABLE sessions ADD COLUMN forgotten_through INTEGER`
)
