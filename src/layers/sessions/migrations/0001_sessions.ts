import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Sessions, their turns and their summaries; turns and summaries are read per session, newest first. */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.all([
    sql`CREATE TABLE sessions (
      id TEXT PRIMARY KEY,
      channel TEXT NOT NULL,
      owner TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      last_active_at INTEGER NOT NULL
    )`,
    sql`CREATE INDEX sessions_last_active ON sessions (last_active_at)`,
    sql`CREATE TABLE session_turns (
      session_id TEXT NOT NULL REFERENCES sessions (id),
      seq INTEGER NOT NULL,
      trace_id TEXT NOT NULL,
      user_message TEXT NOT NULL,
      final_response TEXT,
      at INTEGER NOT NULL,
      prompt_tokens INTEGER NOT NULL,
      cached_tokens INTEGER NOT NULL,
      response_tokens INTEGER NOT NULL,
      tainted_by TEXT NOT NULL,
      answered_at TEXT,
      PRIMARY KEY (session_id, seq)
    )`,
    sql`CREATE TABLE session_summaries (
      session_id TEXT NOT NULL REFERENCES sessions (id),
      covers_through INTEGER NOT NULL,
      text TEXT NOT NULL,
      at INTEGER NOT NULL,
      tainted_by TEXT NOT NULL,
      PRIMARY KEY (session_id, covers_through)
    )`
  ], { discard: true }))
