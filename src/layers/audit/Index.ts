import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, ExecutionStrategy, Exit, Schema, Scope } from "effect"
import * as NodeFs from "node:fs/promises"
import type { AuditQuery } from "../../domain/AuditQuery.js"
import { matchesQuery } from "../../domain/AuditQuery.js"
import { decodeAuditRecord, isExactSealedRecord, Sealed, type SealedRecord } from "../../domain/AuditRecord.js"
import { AuditError, messageOf } from "../../domain/Errors.js"
import { onFirstCall } from "../../domain/OnFirstCall.js"
import { ownerOnlyDatabase } from "../../domain/OwnerOnly.js"
import { type AuditFile, forEachLine, joinPath, listChains } from "./Lines.js"
import { parseLine, sha256 } from "./Seal.js"

/**
 * The query index: a SQLite table of every record (kind, time, sender and the line itself), derived from the
 * JSONL files and caught up before each query from where it stopped in each file. It can always be deleted
 * and rebuilt: the files stay the source of truth. One client per database file per process: a second connection waiting on a lock blocks the event loop.
 */
const SCHEMA_VERSION = 1
const INSERT_BATCH = 500

interface FileRow {
  readonly name: string
  readonly offset: number
  readonly last_len: number
  readonly last_hash: string
  readonly stored_size: number
}

type IndexRow = {
  readonly file: string
  readonly at_ms: number
  readonly kind: string
  readonly sender: string | null
  readonly line: string
}

const decodeSealed = onFirstCall(() => Schema.decodeUnknownEither(Sealed))

const rowOf = (file: string, bytes: Buffer): IndexRow | undefined => {
  const json = parseLine(bytes)
  if (json === undefined || typeof json.kind !== "string" || typeof json.at !== "string") return undefined
  const at = Date.parse(json.at)
  if (Number.isNaN(at)) return undefined
  const sender = typeof json.sender === "string" ? json.sender : null
  return { file, at_ms: at, kind: json.kind, sender, line: bytes.toString("utf8") }
}

/** The line as a record, or undefined (with a warning) when the file holds something that is not one. */
const recordOf = (line: string): SealedRecord | undefined => {
  const json: unknown = JSON.parse(line)
  if (isExactSealedRecord(json)) return json
  const record = decodeAuditRecord(json)
  const sealed = decodeSealed(json)
  return record._tag === "Right" && sealed._tag === "Right" ? { ...record.right, ...sealed.right } : undefined
}

/** The tables, (re)created when the index was made by another version: it is only a cache. */
const createSchema = (sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    const [{ user_version }] = yield* sql<{ user_version: number }>`PRAGMA user_version`
    if (user_version !== SCHEMA_VERSION) {
      yield* sql`DROP TABLE IF EXISTS audit_records`
      yield* sql`DROP TABLE IF EXISTS audit_files`
      yield* sql`CREATE TABLE audit_files (
        name TEXT PRIMARY KEY, offset INTEGER NOT NULL, last_len INTEGER NOT NULL, last_hash TEXT NOT NULL,
        stored_size INTEGER NOT NULL)`
      yield* sql`CREATE TABLE audit_records (
        id INTEGER PRIMARY KEY, file TEXT NOT NULL, at_ms INTEGER NOT NULL, kind TEXT NOT NULL, sender TEXT,
        line TEXT NOT NULL)`
      yield* sql`CREATE INDEX audit_by_at ON audit_records (at_ms, id)`
      yield* sql`CREATE INDEX audit_by_kind ON audit_records (kind, at_ms, id)`
      yield* sql`CREATE INDEX audit_by_sender ON audit_records (sender, at_ms, id)`
      yield* sql`CREATE INDEX audit_by_file ON audit_records (file)`
      yield* sql.unsafe(`PRAGMA user_version = ${SCHEMA_VERSION}`)
    }
    yield* sql`PRAGMA synchronous = NORMAL`
  })

export const makeAuditIndex = (options: { readonly auditDir: string; readonly dbFile: string }) =>
  Effect.gen(function*() {
    const failed = (error: { readonly message: string; readonly cause?: unknown }) =>
      new AuditError({
        path: options.dbFile,
        reason: "Io",
        message: `audit index: ${error.message}${error.cause === undefined ? "" : `: ${messageOf(error.cause)}`}`,
        cause: error
      })
    const open = (filename: string) =>
      Effect.gen(function*() {
        const sql: SqlClient.SqlClient = yield* SqliteClient.make({ filename }).pipe(
          Effect.provide(Reactivity.layer)
        )
        yield* createSchema(sql).pipe(Effect.mapError(failed))
        return sql
      })
    // The index is only a cache of the files: one that SQLite cannot read (corrupt, not a database) is
    // removed and built again from the files.
    const scope = yield* Effect.scope
    const attempt = (filename: string) =>
      Effect.gen(function*() {
        const child = yield* Scope.fork(scope, ExecutionStrategy.sequential)
        return yield* Scope.extend(open(filename), child).pipe(
          // better-sqlite3 throws on a file that is not a database: a failure to handle, not a crash.
          Effect.catchAllDefect((defect) => Effect.fail(failed({ message: messageOf(defect) }))),
          Effect.onError(() => Scope.close(child, Exit.void))
        )
      })
    const sql = yield* attempt(options.dbFile).pipe(
      Effect.catchAll((error) =>
        Effect.gen(function*() {
          yield* Effect.logWarning(`${options.dbFile} is unreadable (${error.message}): rebuilding it from the files`)
          yield* Effect.tryPromise(() =>
            Promise.all(
              ["", "-wal", "-shm", "-journal"].map((suffix) => NodeFs.rm(options.dbFile + suffix, { force: true }))
            )
          ).pipe(Effect.mapError((cause) => failed({ message: "cannot remove it", cause: cause.error })))
          return yield* attempt(options.dbFile)
        })
      ),
      // A folder that cannot be written (a read-only copy): the index lives in memory for this command.
      Effect.catchAll((error) =>
        Effect.zipRight(
          Effect.logInfo(`the audit index cannot be kept in ${options.dbFile} (${error.message}): indexing in memory`),
          attempt(":memory:")
        )
      )
    )
    // The index holds the records themselves: as private as the audit files.
    yield* Effect.promise(() => ownerOnlyDatabase(options.dbFile))

    /** Whether the indexed prefix of a plain file is still what the file holds (same last indexed line). */
    const prefixIntact = async (path: string, row: FileRow, size: number) => {
      if (row.offset > size) return false
      if (row.offset === 0) return true
      const handle = await NodeFs.open(path, "r")
      try {
        const bytes = Buffer.alloc(row.last_len + 1)
        await handle.read(bytes, 0, bytes.length, row.offset - row.last_len - 1)
        return bytes[bytes.length - 1] === 10 && sha256(bytes.subarray(0, row.last_len)) === row.last_hash
      } finally {
        await handle.close()
      }
    }

    /** Rows of the whole, parseable lines from byte `from` on; the next read starts after the last one. */
    const readRows = async (path: string, logical: string, from: number) => {
      const rows: Array<IndexRow> = []
      let position = from
      // The last row's line and where it ends: only its hash is kept, made once the file is read.
      let lastLine: { offset: number; bytes: Buffer } | undefined
      await forEachLine(path, (bytes, terminated) => {
        position += bytes.length + (terminated ? 1 : 0)
        const row = terminated ? rowOf(logical, bytes) : undefined
        if (row === undefined) return
        rows.push(row)
        lastLine = { offset: position, bytes }
      }, { start: from })
      const last = lastLine === undefined
        ? undefined
        : { offset: lastLine.offset, last_len: lastLine.bytes.length, last_hash: sha256(lastLine.bytes) }
      return { rows, last }
    }

    /** Archives are reindexed whole when they appear (once a month); plain files from where the index stopped. */
    const catchUp = (file: AuditFile, row: FileRow | undefined) =>
      Effect.gen(function*() {
        const path = joinPath(options.auditDir, file.name)
        const { size } = yield* Effect.tryPromise(() => NodeFs.stat(path))
        if (row !== undefined && row.stored_size === size) return
        const resume = row !== undefined && !file.name.endsWith(".gz") &&
          (yield* Effect.tryPromise(() => prefixIntact(path, row, size)))
        const from = resume ? row.offset : 0
        const { last, rows } = yield* Effect.tryPromise(() => readRows(path, file.logical, from))
        const kept = last ?? (from > 0 && row !== undefined ? row : { offset: 0, last_len: 0, last_hash: "" })
        yield* sql.withTransaction(Effect.gen(function*() {
          if (from === 0) yield* sql`DELETE FROM audit_records WHERE file = ${file.logical}`
          for (let i = 0; i < rows.length; i += INSERT_BATCH) {
            yield* sql`INSERT INTO audit_records ${sql.insert(rows.slice(i, i + INSERT_BATCH))}`
          }
          yield* sql`INSERT OR REPLACE INTO audit_files ${
            sql.insert({
              name: file.logical,
              offset: kept.offset,
              last_len: kept.last_len,
              last_hash: kept.last_hash,
              stored_size: size
            })
          }`
        }))
      })

    /** Brings the index up to the files: new lines, rewritten or vanished files reindexed or dropped. */
    const refresh = Effect.gen(function*() {
      const chains = yield* listChains(options.auditDir)
      const known = new Map((yield* sql<FileRow>`SELECT * FROM audit_files`).map((row) => [row.name, row]))
      const present = new Set<string>()
      for (const files of chains.values()) {
        for (const file of files) {
          present.add(file.logical)
          yield* catchUp(file, known.get(file.logical))
        }
      }
      for (const name of known.keys()) {
        if (present.has(name)) continue
        yield* sql`DELETE FROM audit_records WHERE file = ${name}`
        yield* sql`DELETE FROM audit_files WHERE name = ${name}`
      }
    })

    const lock = yield* Effect.makeSemaphore(1)

    const query = (query: AuditQuery) =>
      lock.withPermits(1)(Effect.gen(function*() {
        if (query.limit <= 0) return []
        yield* refresh
        const clauses = [
          ...(query.kind === undefined ? [] : [sql`kind = ${query.kind}`]),
          ...(query.since === undefined ? [] : [sql`at_ms >= ${query.since}`]),
          ...(query.until === undefined ? [] : [sql`at_ms <= ${query.until}`]),
          ...(query.sender === undefined ? [] : [sql`sender = ${query.sender}`])
        ]
        const rows = yield* sql<{ line: string }>`SELECT line FROM audit_records WHERE ${sql.and(clauses)}
          ORDER BY at_ms DESC, id DESC LIMIT ${Math.floor(query.limit)}`
        const records: Array<SealedRecord> = []
        for (const { line } of rows) {
          const record = recordOf(line)
          if (record !== undefined && matchesQuery(query)(record)) records.push(record)
        }
        return records
      })).pipe(
        Effect.catchTags({
          SqlError: (error) => Effect.fail(failed(error)),
          UnknownException: (error) => Effect.fail(failed(error))
        })
      )

    return { query, refresh: lock.withPermits(1)(refresh) } as const
  })
