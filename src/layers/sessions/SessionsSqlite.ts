import { FileSystem } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Clock, Effect, Exit, Layer, Option, Schema } from "effect"
import * as NodePath from "node:path"
import { messageOf } from "../../domain/Errors.js"
import {
  channelKind,
  forbidden,
  type NewSessionTurn,
  SessionError,
  SessionInfo,
  SessionSummary,
  SessionTurn,
  storedTurn
} from "../../domain/Session.js"
import { withSpanWhenTraced } from "../../programs/Spans.js"
import { IdGenerator } from "../../services/IdGenerator.js"
import { MyclawConfig } from "../../services/MyclawConfig.js"
import { Sessions } from "../../services/Sessions.js"
import { Workspace } from "../../services/Workspace.js"
import { makeGroupCommit, type Reply } from "../files/GroupCommit.js"
import { makeSqliteDirect } from "../SqliteDirect.js"
import { walDurability } from "../SqliteDurability.js"
import { migrateRecord } from "../SqlMigrations.js"
import { makeWalCheckpointer } from "../WalCheckpointer.js"
import Sessions0001 from "./migrations/0001_sessions.js"
import Sessions0002, { FOREIGN_OWNER } from "./migrations/0002_record_turn.js"
import Sessions0003 from "./migrations/0003_drop_last_active_index.js"

const migrations = {
  "1_sessions": Sessions0001,
  "2_record_turn": Sessions0002,
  "3_drop_last_active_index": Sessions0003
}

const TurnRow = Schema.Struct({
  ...SessionTurn.fields,
  tainted_by: Schema.parseJson(Schema.Array(Schema.String))
})
const decodeTurns = Schema.decodeUnknown(Schema.Array(TurnRow))
const SummaryRow = Schema.Struct({
  ...SessionSummary.fields,
  tainted_by: Schema.parseJson(Schema.Array(Schema.String))
})
const decodeSummaries = Schema.decodeUnknown(Schema.Array(SummaryRow))
const decodeInfos = Schema.decodeUnknown(Schema.Array(SessionInfo))
const HistoryRow = Schema.Struct({
  owner: Schema.String,
  summary: Schema.NullOr(Schema.parseJson(SessionSummary)),
  turns: Schema.NullOr(Schema.parseJson(Schema.Array(SessionTurn)))
})
const decodeHistoryRows = Schema.decodeUnknown(Schema.Array(HistoryRow))

/** A turn waiting for the writer, and its caller waiting for the outcome. */
interface Recording {
  readonly turn: NewSessionTurn
  readonly done: Reply<void, SessionError>
}

// 12 columns a turn: well under SQLite's 32,766 bound parameters per statement.
const MAX_TURNS_PER_STATEMENT = 500

const ioError = (sessionId: string, what: string) => (cause: SqlError.SqlError | unknown) =>
  new SessionError({
    sessionId,
    reason: "Io",
    message: `${what}: ${messageOf(cause instanceof Error && "cause" in cause ? cause.cause : cause)}`,
    cause
  })

/**
 * Sessions over the SQLite client of `file` (the tables are created or migrated at start); queries are per session,
 * indexed. `batch` follows the traces' group commit: no commit waits for the disk (a crash of myclaw loses
 * nothing, a power loss may lose the last turns, which stay in the trace files); `always` syncs every commit.
 */
export const makeSessionsSql = (file: string, fsync: "always" | "batch" = "always") =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ids = yield* IdGenerator
    yield* Effect.orDie(walDurability(fsync))
    yield* migrateRecord("sessions_migrations", migrations)
    // What every turn runs (its history, its record, its summary) goes to the connection itself; the transaction
    // below is `exclusive`.
    const direct = yield* makeSqliteDirect
    // Each write counted, so that its log is folded into the database file by a thread of its own.
    const checkpointer = yield* makeWalCheckpointer(file)

    const ownerOf = (sessionId: string) =>
      Effect.map(
        sql<{ owner: string }>`SELECT owner FROM sessions WHERE id = ${sessionId}`,
        (rows) => Option.fromNullable(rows[0]?.owner)
      )

    // A session's history in one statement: its owner, and only for that owner its newest summary and the turns after
    // it, as JSON (three statements through the SQL client cost three times its overhead, on every turn).
    const historyRow = (sessionId: string, owner: string) =>
      direct.run(sql`SELECT s.owner AS owner,
        CASE WHEN s.owner = ${owner} THEN (
          SELECT json_object('covers_through', covers_through, 'text', text, 'at', at, 'tainted_by', json(tainted_by))
          FROM session_summaries WHERE session_id = s.id ORDER BY covers_through DESC LIMIT 1
        ) END AS summary,
        CASE WHEN s.owner = ${owner} THEN (
          SELECT json_group_array(json_object('seq', seq, 'trace_id', trace_id, 'user_message', user_message,
              'final_response', final_response, 'at', at, 'prompt_tokens', prompt_tokens,
              'cached_tokens', cached_tokens, 'response_tokens', response_tokens, 'tainted_by', json(tainted_by),
              'answered_at', answered_at) ORDER BY seq)
          FROM session_turns t WHERE t.session_id = s.id AND t.seq > coalesce(
            (SELECT max(covers_through) FROM session_summaries WHERE session_id = s.id), 0)
        ) END AS turns
      FROM sessions s WHERE s.id = ${sessionId}`).pipe(Effect.flatMap(decodeHistoryRows))

    const history = (sessionId: string, owner: string) =>
      Effect.flatMap(historyRow(sessionId, owner), ([row]) => {
        if (row === undefined) return Effect.succeed({ summary: null, turns: [] })
        if (row.owner !== owner) return forbidden(sessionId)
        return Effect.succeed({ summary: row.summary, turns: row.turns ?? [] })
      }).pipe(Effect.catchTags({
        SqlError: ioError(sessionId, "cannot read the session"),
        ParseError: ioError(sessionId, "a stored turn is unreadable")
      }))

    const createSession = (sessionId: string, channel: string, owner: string, at: number) =>
      sql`INSERT INTO sessions ${
        sql.insert({ id: sessionId, channel, owner, created_at: at, last_active_at: at })
      } ON CONFLICT (id) DO NOTHING`

    // One statement, atomic (see the `session_turn_records` trigger): a session of another owner aborts it, changing
    // nothing.
    const rowOf = (turn: NewSessionTurn) => ({
      session_id: turn.sessionId,
      channel: channelKind(turn.owner),
      owner: turn.owner,
      ...storedTurn(turn),
      tainted_by: JSON.stringify(turn.taintedBy)
    })
    const recordOne = (turn: NewSessionTurn) =>
      direct.run(sql`INSERT INTO session_turn_records ${sql.insert(rowOf(turn))}`).pipe(
        Effect.asVoid,
        Effect.catchTag("SqlError", (error) =>
          messageOf(error.cause).includes(FOREIGN_OWNER)
            ? Effect.fail(forbidden(turn.sessionId))
            : Effect.fail(ioError(turn.sessionId, "cannot record the turn")(error)))
      )

    // The turns that closed while the writer was busy, in one statement (group commit): it runs at the close of every
    // turn, and each statement through the SQL client, and each commit, has a cost of its own. A statement of several
    // turns is undone whole when one of them fails (another owner's session): each is then recorded alone, so that
    // only that one fails.
    const recordAlone = (job: Recording) =>
      Effect.map(Effect.exit(recordOne(job.turn)), (exit) => {
        checkpointer.wrote()
        job.done(exit)
      })
    const recordBatch = (jobs: ReadonlyArray<Recording>): Effect.Effect<void> =>
      jobs.length === 1
        ? Effect.asVoid(recordAlone(jobs[0]!))
        : Effect.flatMap(
          Effect.exit(
            direct.run(sql`INSERT INTO session_turn_records ${sql.insert(jobs.map((job) => rowOf(job.turn)))}`)
          ),
          (together) =>
            Exit.isSuccess(together)
              ? Effect.sync(() => {
                checkpointer.wrote(jobs.length)
                for (const job of jobs) job.done(Exit.void)
              })
              : Effect.forEach(jobs, recordAlone, { discard: true })
        )
    const writer = yield* makeGroupCommit<Recording>({ step: recordBatch, maxBatch: MAX_TURNS_PER_STATEMENT })
    const closed = (turn: NewSessionTurn) => () =>
      ioError(turn.sessionId, "cannot record the turn")("the sessions store is closed")
    const recordTurn = (turn: NewSessionTurn) =>
      writer.request<void, SessionError>((done) => ({ turn, done }), closed(turn)).pipe(
        withSpanWhenTraced("Sessions.recordTurn")
      )

    // Once a long session has a summary, every turn adds one: its span only when a tracer exports spans.
    const addSummary = (sessionId: string, summary: SessionSummary) =>
      direct.run(
        sql`INSERT OR REPLACE INTO session_summaries ${
          sql.insert({ session_id: sessionId, ...summary, tainted_by: JSON.stringify(summary.tainted_by) })
        }`
      ).pipe(
        Effect.andThen(() => checkpointer.wrote()),
        Effect.catchTag("SqlError", ioError(sessionId, "cannot store the summary")),
        withSpanWhenTraced("Sessions.addSummary")
      )

    const startNew = Effect.fn("Sessions.startNew")(function*(channel: string, owner: string) {
      const id = `${channel}-${yield* ids.next("session")}`
      const at = yield* Clock.currentTimeMillis
      yield* createSession(id, channel, owner, at).pipe(
        Effect.catchTag("SqlError", ioError(id, "cannot open the session"))
      )
      return id
    })

    const infos = (where: string | null) =>
      sql`SELECT s.id, s.channel, s.owner, s.created_at, s.last_active_at,
        (SELECT count(*) FROM session_turns t WHERE t.session_id = s.id) AS turns,
        (SELECT count(*) FROM session_summaries m WHERE m.session_id = s.id) AS summaries
      FROM sessions s ${where === null ? sql`` : sql`WHERE s.id = ${where}`}
      ORDER BY s.last_active_at DESC, s.id`.pipe(Effect.flatMap(decodeInfos))

    const list = infos(null).pipe(Effect.catchTags({
      SqlError: ioError("", "cannot list the sessions"),
      ParseError: ioError("", "a stored session is unreadable")
    }))

    const show = Effect.fn("Sessions.show")((sessionId: string) =>
      Effect.gen(function*() {
        const [info] = yield* infos(sessionId)
        if (info === undefined) return Option.none()
        const turns = yield* sql`SELECT * FROM session_turns WHERE session_id = ${sessionId} ORDER BY seq`.pipe(
          Effect.flatMap(decodeTurns)
        )
        const summaries = yield* sql`SELECT covers_through, text, at, tainted_by FROM session_summaries
        WHERE session_id = ${sessionId} ORDER BY covers_through`.pipe(Effect.flatMap(decodeSummaries))
        return Option.some({ info, turns, summaries })
      }).pipe(Effect.catchTags({
        SqlError: ioError(sessionId, "cannot read the session"),
        ParseError: ioError(sessionId, "a stored turn is unreadable")
      }))
    )

    const forget = Effect.fn("Sessions.forget")((sessionId: string) =>
      direct.exclusive(sql.withTransaction(Effect.gen(function*() {
        if (Option.isNone(yield* ownerOf(sessionId))) {
          return yield* new SessionError({ sessionId, reason: "NotFound", message: `no session ${sessionId}` })
        }
        const deleted = yield* sql<{ seq: number }>`DELETE FROM session_turns WHERE session_id = ${sessionId}
        RETURNING seq`
        yield* sql`DELETE FROM session_summaries WHERE session_id = ${sessionId}`
        return deleted.length
      }))).pipe(Effect.catchTag("SqlError", ioError(sessionId, "cannot forget the session")))
    )

    return Sessions.of({
      history: (sessionId, owner) => withSpanWhenTraced("Sessions.history")(history(sessionId, owner)),
      recordTurn,
      addSummary,
      startNew,
      list,
      show,
      forget
    })
  })

/** Sessions in SQLite at `file` (its folder created first), durable as `fsync` says; one client per file per process. */
export const SessionsSqliteAt = (file: string, fsync: "always" | "batch" = "always") =>
  Layer.scoped(Sessions, makeSessionsSql(file, fsync)).pipe(
    Layer.provide(Layer.unwrapEffect(
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        yield* fs.makeDirectory(NodePath.dirname(file), { recursive: true }).pipe(Effect.orDie)
        return SqliteClient.layer({ filename: file })
      })
    ))
  )

/** Sessions in `<workspace>/.state/sessions.sqlite`, as durable as the traces (`traces.fsync`). */
export const SessionsSqlite = Layer.unwrapEffect(
  Effect.map(
    Effect.all([Workspace, MyclawConfig]),
    ([workspace, { config }]) =>
      SessionsSqliteAt(NodePath.join(workspace.root, ".state", "sessions.sqlite"), config.traces.fsync)
  )
)
