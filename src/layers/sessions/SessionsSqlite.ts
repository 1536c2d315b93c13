import { FileSystem } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Cause, Clock, Effect, Exit, Layer, Option, Schema } from "effect"
import * as NodePath from "node:path"
import { messageOf } from "../../domain/Errors.js"
import { onFirstCall } from "../../domain/OnFirstCall.js"
import { OWNER_FOLDER, ownerOnlyDatabase } from "../../domain/OwnerOnly.js"
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
import { Sessions, type UnrecordedCandidate } from "../../services/Sessions.js"
import { Workspace } from "../../services/Workspace.js"
import * as Compose from "../Compose.js"
import { makeSqliteDirect } from "../SqliteDirect.js"
import { walDurability } from "../SqliteDurability.js"
import { migrateRecord } from "../SqlMigrations.js"
import { makeWalCheckpointer } from "../WalCheckpointer.js"
import Sessions0001 from "./migrations/0001_sessions.js"
import Sessions0002, { FOREIGN_OWNER } from "./migrations/0002_record_turn.js"
import Sessions0003 from "./migrations/0003_drop_last_active_index.js"
import Sessions0004 from "./migrations/0004_forgotten_through.js"
import Sessions0005 from "./migrations/0005_turn_once.js"

const migrations = {
  "1_sessions": Sessions0001,
  "2_record_turn": Sessions0002,
  "3_drop_last_active_index": Sessions0003,
  "4_forgotten_through": Sessions0004,
  "5_turn_once": Sessions0005
}

const TurnRow = Schema.Struct({
  ...SessionTurn.fields,
  tainted_by: Schema.parseJson(Schema.Array(Schema.String))
})
const decodeTurns = onFirstCall(() => Schema.decodeUnknown(Schema.Array(TurnRow)))
const SummaryRow = Schema.Struct({
  ...SessionSummary.fields,
  tainted_by: Schema.parseJson(Schema.Array(Schema.String))
})
const decodeSummaries = onFirstCall(() => Schema.decodeUnknown(Schema.Array(SummaryRow)))
const decodeInfos = onFirstCall(() => Schema.decodeUnknown(Schema.Array(SessionInfo)))
const HistoryRow = Schema.Struct({
  owner: Schema.String,
  summary: Schema.NullOr(Schema.parseJson(SessionSummary)),
  turns: Schema.NullOr(Schema.parseJson(Schema.Array(SessionTurn)))
})
const decodeHistoryRows = onFirstCall(() => Schema.decodeUnknown(Schema.Array(HistoryRow)))

// 12 columns a turn: well under SQLite's 32,766 bound parameters per statement.
const MAX_TURNS_PER_STATEMENT = 500

/** A turn's record waits at most this long to be written with those that close after it... */
const WRITE_AFTER = "20 millis"
/** ...or until this many wait. */
export const WRITE_AT_TURNS = 64

/** How many sessions' owners are remembered from their last read. */
const OWNERS_KEPT = 1_024

const ioError = (sessionId: string, what: string) => (cause: SqlError.SqlError | unknown) =>
  new SessionError({
    sessionId,
    reason: "Io",
    message: `${what}: ${messageOf(cause instanceof Error && "cause" in cause ? cause.cause : cause)}`,
    cause
  })

/**
 * Sessions over the SQLite client of `file` (the tables are created or migrated at start); queries are per session,
 * indexed. A turn's record is written behind it, with the others that close within WRITE_AFTER (see below): what a
 * stopped process had not written is in the trace files, and comes back from them at the next start. `batch`
 * follows the traces' group commit: no commit waits for the disk; `always` syncs every commit.
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

    // A session's owner as stored (undefined: no such session).
    const storedOwner = (sessionId: string) =>
      Effect.map(
        direct.run(sql<{ owner: string }>`SELECT owner FROM sessions WHERE id = ${sessionId}`),
        (rows) => rows[0]?.owner
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

    // The owners the last reads found (null: no such session yet), so that recording the turn that read its
    // session's history need not read its owner again. An owner changes only through `reown`, which updates what is
    // remembered; a session found missing may have been opened by another process since, which the record's own
    // statement still refuses. The oldest are let go.
    const owners = new Map<string, string | null>()
    const remember = (sessionId: string, owner: string | null) => {
      owners.delete(sessionId)
      owners.set(sessionId, owner)
      if (owners.size > OWNERS_KEPT) owners.delete(owners.keys().next().value!)
    }
    const history = (sessionId: string, owner: string) =>
      Effect.flatMap(historyRow(sessionId, owner), ([row]) => {
        remember(sessionId, row === undefined ? null : row.owner)
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

    // A turn whose record cannot be written is said so: its caller has gone on (the turn is in its trace, and the
    // next start brings it back from there if it can).
    const recordAlone = (turn: NewSessionTurn) =>
      Effect.flatMap(Effect.exit(recordOne(turn)), (exit) => {
        checkpointer.wrote()
        return Exit.isSuccess(exit) ? Effect.void : Effect.logError(
          `the turn ${turn.traceId} is not in its session's history: ${messageOf(Cause.squash(exit.cause))}`
        )
      })
    // Turns in one statement; when it fails (another owner's session), each alone, so that only that one fails.
    const recordTogether = (turns: ReadonlyArray<NewSessionTurn>): Effect.Effect<void> =>
      turns.length === 1
        ? recordAlone(turns[0]!)
        : Effect.flatMap(
          Effect.exit(direct.run(sql`INSERT INTO session_turn_records ${sql.insert(turns.map(rowOf))}`)),
          (together) =>
            Exit.isSuccess(together)
              ? Effect.sync(() => checkpointer.wrote(turns.length))
              : Effect.forEach(turns, recordAlone, { discard: true })
        )

    // Write-behind: a closed turn's record waits, with those that close after it, until WRITE_AFTER has passed,
    // WRITE_AT_TURNS wait, or its session is read, and they are written together (one statement, one commit, where
    // a turn alone costs about five times its share). Its caller does not wait for the disk: the turn is already
    // in its trace, written first, and a process that stops with records waiting finds them there at its next
    // start (`unrecorded`). Until it is written, its session's owner is known from it.
    let waiting: Array<NewSessionTurn> = []
    // Each session with a turn waiting, or taken by a write not yet ended: its owner, and the write that takes its
    // newest turn (writes are numbered as they take what waits).
    const unwritten = new Map<string, { readonly owner: string; readonly write: number }>()
    let writes = 0
    const writing = yield* Effect.makeSemaphore(1)
    let wake: (() => void) | undefined
    // One write at a time, in the order turns closed; uninterruptible, so that what it took is written whole.
    const writeWaiting: Effect.Effect<void> = Effect.uninterruptible(
      writing.withPermits(1)(Effect.suspend(() => {
        if (waiting.length === 0) return Effect.void
        const turns = waiting
        waiting = []
        const write = writes++
        const chunks: Array<ReadonlyArray<NewSessionTurn>> = []
        for (let i = 0; i < turns.length; i += MAX_TURNS_PER_STATEMENT) {
          chunks.push(turns.slice(i, i + MAX_TURNS_PER_STATEMENT))
        }
        return Effect.ensuring(
          Effect.forEach(chunks, recordTogether, { discard: true }),
          Effect.sync(() => {
            for (const turn of turns) {
              const entry = unwritten.get(turn.sessionId)
              if (entry !== undefined && entry.write <= write) unwritten.delete(turn.sessionId)
            }
          })
        )
      }))
    )
    /** What waits for `sessionId`'s record is written first. */
    const writtenFor = (sessionId: string) => unwritten.has(sessionId) ? writeWaiting : Effect.void
    // The writer: when a turn waits, WRITE_AFTER later, everything that waits then. The scope's end writes the rest.
    const someWaiting = Effect.async<void>((resume) => {
      if (waiting.length > 0) resume(Effect.void)
      else wake = () => resume(Effect.void)
    })
    yield* Effect.forkScoped(Effect.forever(
      someWaiting.pipe(Effect.zipRight(Effect.sleep(WRITE_AFTER)), Effect.zipRight(writeWaiting))
    ))
    // After the last write, a record would wait for ever: it is refused (its turn is in its trace).
    let closed = false
    yield* Effect.addFinalizer(() => Effect.zipRight(writeWaiting, Effect.sync(() => void (closed = true))))

    const refusedAsClosed = (turn: NewSessionTurn) =>
      Effect.fail(ioError(turn.sessionId, "cannot record the turn")("the sessions store is closed"))
    const enqueue = (turn: NewSessionTurn, stored: string | undefined): Effect.Effect<void, SessionError> =>
      Effect.suspend(() => {
        if (closed) return refusedAsClosed(turn)
        const owner = unwritten.get(turn.sessionId)?.owner ?? stored
        if (owner !== undefined && owner !== turn.owner) return Effect.fail(forbidden(turn.sessionId))
        waiting.push(turn)
        unwritten.set(turn.sessionId, { owner: turn.owner, write: writes })
        remember(turn.sessionId, turn.owner)
        if (waiting.length >= WRITE_AT_TURNS) return writeWaiting
        const waking = wake
        wake = undefined
        waking?.()
        return Effect.void
      })
    const recordTurn = (turn: NewSessionTurn) =>
      Effect.suspend(() =>
        closed
          ? refusedAsClosed(turn)
          : unwritten.has(turn.sessionId)
          ? enqueue(turn, undefined)
          : owners.has(turn.sessionId)
          ? enqueue(turn, owners.get(turn.sessionId) ?? undefined)
          : Effect.flatMap(
            Effect.catchTag(
              storedOwner(turn.sessionId),
              "SqlError",
              ioError(turn.sessionId, "cannot record the turn")
            ),
            (stored) => enqueue(turn, stored)
          )
      ).pipe(withSpanWhenTraced("Sessions.recordTurn"))

    // Of the turns given, those not in their session, and not forgotten since they started.
    const unrecorded = (turns: ReadonlyArray<UnrecordedCandidate>) =>
      turns.length === 0
        ? Effect.succeed([])
        : writeWaiting.pipe(
          Effect.zipRight(direct.run(sql<{ trace_id: string }>`SELECT j.value ->> '$.traceId' AS trace_id
            FROM json_each(${JSON.stringify(turns)}) AS j
            LEFT JOIN sessions s ON s.id = j.value ->> '$.sessionId'
            WHERE NOT EXISTS (SELECT 1 FROM session_turns t WHERE t.trace_id = j.value ->> '$.traceId')
              AND (s.forgotten_through IS NULL OR j.value ->> '$.startedAt' > s.forgotten_through)
            ORDER BY j.key`)),
          Effect.map((rows) => rows.map((row) => row.trace_id)),
          Effect.catchTag("SqlError", ioError("", "cannot compare the traces with the sessions"))
        )

    // Once a long session has a summary, every turn adds one: its span only when a tracer exports spans.
    const addSummary = (sessionId: string, summary: SessionSummary) =>
      Effect.zipRight(
        writtenFor(sessionId),
        direct.run(
          sql`INSERT OR REPLACE INTO session_summaries ${
            sql.insert({ session_id: sessionId, ...summary, tainted_by: JSON.stringify(summary.tainted_by) })
          }`
        )
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

    const list = Effect.zipRight(writeWaiting, infos(null)).pipe(Effect.catchTags({
      SqlError: ioError("", "cannot list the sessions"),
      ParseError: ioError("", "a stored session is unreadable")
    }))

    const show = Effect.fn("Sessions.show")((sessionId: string) =>
      Effect.gen(function*() {
        yield* writeWaiting
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

    // The turns waiting are written first, and the session keeps when its turns were forgotten: a trace that started
    // until then is not brought back into it (`unrecorded`).
    const forget = Effect.fn("Sessions.forget")((sessionId: string) =>
      Effect.zipRight(
        writeWaiting,
        direct.exclusive(sql.withTransaction(Effect.gen(function*() {
          if ((yield* storedOwner(sessionId)) === undefined) {
            return yield* new SessionError({ sessionId, reason: "NotFound", message: `no session ${sessionId}` })
          }
          const now = yield* Clock.currentTimeMillis
          yield* sql`UPDATE sessions SET forgotten_through = max(coalesce(forgotten_through, 0), ${now})
          WHERE id = ${sessionId}`
          const deleted = yield* sql<{ seq: number }>`DELETE FROM session_turns WHERE session_id = ${sessionId}
        RETURNING seq`
          yield* sql`DELETE FROM session_summaries WHERE session_id = ${sessionId}`
          return deleted.length
        })))
      ).pipe(Effect.catchTag("SqlError", ioError(sessionId, "cannot forget the session")))
    )

    // The records waiting for the session are written first (they carry its owner), then the owner changes in
    // one statement that checks the owner it read, and the owner remembered with it.
    const reown = (sessionId: string, owner: string, mayTake: (stored: string) => boolean) =>
      Effect.gen(function*() {
        yield* writtenFor(sessionId)
        const stored = yield* storedOwner(sessionId)
        if (stored === undefined || stored === owner || !mayTake(stored)) return stored
        yield* direct.run(sql`UPDATE sessions SET owner = ${owner} WHERE id = ${sessionId} AND owner = ${stored}`)
        checkpointer.wrote()
        const now = yield* storedOwner(sessionId)
        remember(sessionId, now ?? null)
        return now
      }).pipe(Effect.catchTag("SqlError", ioError(sessionId, "cannot change the session's owner")))

    return Sessions.of({
      reown,
      history: (sessionId, owner) =>
        withSpanWhenTraced("Sessions.history")(Effect.zipRight(writtenFor(sessionId), history(sessionId, owner))),
      recordTurn,
      unrecorded,
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
    Compose.provide(Layer.unwrapEffect(
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        yield* fs.makeDirectory(NodePath.dirname(file), { recursive: true, mode: OWNER_FOLDER }).pipe(Effect.orDie)
        return Layer.effectDiscard(Effect.promise(() => ownerOnlyDatabase(file))).pipe(
          Compose.provideMerge(SqliteClient.layer({ filename: file }))
        )
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
