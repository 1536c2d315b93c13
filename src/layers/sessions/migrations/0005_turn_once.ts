import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { FOREIGN_OWNER } from "./0002_record_turn.js"

/**
 * A turn is in its session at most once: a record whose trace is already there changes nothing. Two processes
 * can both write one turn's record (one adds back, from the traces at its start, what the other still has waiting
 * to be written), and whichever writes second is skipped.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.all([
    sql`CREATE INDEX session_turns_trace ON session_turns (trace_id)`,
    sql`DROP TRIGGER record_session_turn`,
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
        FROM session_turns WHERE session_id = NEW.session_id
        HAVING NOT EXISTS (SELECT 1 FROM session_turns WHERE trace_id = NEW.trace_id);
    END`)
  ], { discard: true }))
