import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The message a turn recorded for another owner's session is refused with (the whole statement is undone). */
export const FOREIGN_OWNER = "myclaw: the session belongs to another owner"

/**
 * A turn is recorded by one INSERT into `session_turn_records`, atomically: the session is created or its last
 * activity moved on (never back), for its owner only, and the turn is numbered after the session's last one.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.all([
    sql`CREATE VIEW session_turn_records AS SELECT
      NULL AS session_id, NULL AS channel, NULL AS owner, NULL AS trace_id, NULL AS user_message,
      NULL AS final_response, NULL AS at, NULL AS prompt_tokens, NULL AS cached_tokens, NULL AS response_tokens,
      NULL AS tainted_by, NULL AS answered_at
      WHERE 0`,
    sql.unsafe(`CREATE TRIGGER record_session_turn INSTEAD OF INSERT ON session_turn_records BEGIN
      INSERT INTO sessions (id, channel, owner, created_at, last_active_at)
        VALUES (NEW.session_id, NEW.channel, NEW.owner, NEW.at, NEW.at)
        ON CONFLICT (id) DO UPDATE SET last_active_at = max(last_active_at, excluded.last_active_at)
        WHERE owner = excluded.owner;
      SELECT RAISE(ABORT, '${FOREIGN_OWNER}')
        WHERE (SELECT owner FROM sessions WHERE id = NEW.session_id) <> NEW.owner;
      INSERT INTO session_turns (session_id, seq, trace_id, user_message, final_response, at,
          prompt_tokens, cached_tokens, response_tokens, tainted_by, answered_at)
        SELECT NEW.session_id, coalesce(max(seq), 0) + 1, NEW.trace_id, NEW.user_message, NEW.final_response,
          NEW.at, NEW.prompt_tokens, NEW.cached_tokens, NEW.response_tokens, NEW.tainted_by, NEW.answered_at
        FROM session_turns WHERE session_id = NEW.session_id;
    END`)
  ], { discard: true }))
