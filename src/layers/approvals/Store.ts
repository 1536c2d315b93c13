import { FileSystem } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Cause, Effect, Layer, Option, Schema } from "effect"
import * as NodePath from "node:path"
import { messageOf, WorkspaceError } from "../../domain/Errors.js"
import { OWNER_FOLDER, ownerOnlyDatabase } from "../../domain/OwnerOnly.js"
import { Workspace } from "../../services/Workspace.js"
import * as Compose from "../Compose.js"
import { migrateRecord } from "../SqlMigrations.js"

const migrations = {
  "1_approval_requests": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.zipRight(
      sql`CREATE TABLE approval_requests (
        id TEXT PRIMARY KEY,
        nonce_hash TEXT NOT NULL,
        session_id TEXT NOT NULL,
        trace_id TEXT NOT NULL,
        requester TEXT NOT NULL,
        channel TEXT NOT NULL,
        tool TEXT NOT NULL,
        target TEXT NOT NULL,
        effect_class TEXT NOT NULL,
        args_hash TEXT NOT NULL,
        tainted INTEGER NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'consumed', 'expired')),
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        decided_at INTEGER,
        granted INTEGER,
        via TEXT,
        reason TEXT
      )`,
      sql`CREATE INDEX approval_requests_state ON approval_requests (state)`
    ))
}

/** A request as SQLite keeps it: the nonce only as its sha256, the arguments only as their hash. */
export const StoredRequest = Schema.Struct({
  id: Schema.String,
  nonce_hash: Schema.String,
  session_id: Schema.String,
  trace_id: Schema.String,
  requester: Schema.String,
  channel: Schema.String,
  tool: Schema.String,
  target: Schema.String,
  effect_class: Schema.String,
  args_hash: Schema.String,
  tainted: Schema.Number,
  state: Schema.Literal("pending", "consumed", "expired"),
  created_at: Schema.Number,
  expires_at: Schema.Number,
  decided_at: Schema.NullOr(Schema.Number),
  granted: Schema.NullOr(Schema.Number),
  via: Schema.NullOr(Schema.String),
  reason: Schema.NullOr(Schema.String)
})
export type StoredRequest = typeof StoredRequest.Type

export type NewRequest = Omit<StoredRequest, "state" | "decided_at" | "granted" | "via" | "reason">

export interface Settlement {
  readonly granted: boolean
  readonly via: string
  readonly reason: string
  readonly decidedAt: number
}

/** Pending and consumed approval requests, durable in SQLite (the table is created or migrated at start). */
export const makeApprovalStore = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* migrateRecord("approvals_migrations", migrations)

  const insertPending = (row: NewRequest) =>
    sql`INSERT INTO approval_requests ${sql.insert({ ...row, state: "pending" })}`.pipe(Effect.asVoid)

  const find = SqlSchema.findOne({
    Request: Schema.String,
    Result: StoredRequest,
    execute: (id) => sql`SELECT * FROM approval_requests WHERE id = ${id}`
  })

  /** Settles a pending request; false when it was not pending any more (it can be settled only once). */
  const consume = (id: string, settlement: Settlement) =>
    sql<{ id: string }>`UPDATE approval_requests
      SET state = 'consumed', decided_at = ${settlement.decidedAt}, granted = ${settlement.granted ? 1 : 0},
        via = ${settlement.via}, reason = ${settlement.reason}
      WHERE id = ${id} AND state = 'pending'
      RETURNING id`.pipe(Effect.map((rows) => rows.length === 1))

  /** A consumed grant whose verdict could not be audited is recorded as the denial it became. */
  const revoke = (id: string, settlement: Settlement) =>
    sql`UPDATE approval_requests
      SET granted = 0, via = ${settlement.via}, reason = ${settlement.reason}, decided_at = ${settlement.decidedAt}
      WHERE id = ${id} AND state = 'consumed'`.pipe(Effect.asVoid)

  /** At start: whatever a previous process left pending can never be answered. */
  const expireAllPending = (now: number, reason: string) =>
    SqlSchema.findAll({
      Request: Schema.Void,
      Result: StoredRequest,
      execute: () =>
        sql`UPDATE approval_requests
          SET state = 'expired', decided_at = ${now}, granted = 0, via = 'restart', reason = ${reason}
          WHERE state = 'pending'
          RETURNING *`
    })(undefined)

  return { insertPending, find, consume, revoke, expireAllPending } as const
})

export type ApprovalStore = Effect.Effect.Success<typeof makeApprovalStore>

/** The SqlClient of the approvals database at `file`, its folder created first. One client per file per process. */
export const ApprovalsStoreSqlite = (file: string) =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      yield* fs.makeDirectory(NodePath.dirname(file), { recursive: true, mode: OWNER_FOLDER })
      const unreadable = (cause: Cause.Cause<unknown>) =>
        new WorkspaceError({
          path: file,
          reason: "Io",
          message: `the approvals database cannot be read (${messageOf(Cause.squash(cause))}): move it aside ` +
            "and start again; pending approvals expire at a restart anyway, and every verdict is in the audit log",
          cause: Cause.squash(cause)
        })
      // A file SQLite cannot read fails here, naming it, instead of in the middle of the first approval.
      const probe = Layer.effectDiscard(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT count(*) FROM sqlite_master`).pipe(
          Effect.catchAllCause((cause) => Effect.fail(unreadable(cause))),
          Effect.zipRight(Effect.promise(() => ownerOnlyDatabase(file)))
        )
      )
      return probe.pipe(
        Compose.provideMerge(SqliteClient.layer({ filename: file })),
        Layer.catchAllCause((cause) =>
          Layer.fail(
            Cause.failureOption(cause).pipe(
              Option.filter((error): error is WorkspaceError => error instanceof WorkspaceError),
              Option.getOrElse(() => unreadable(cause))
            )
          )
        )
      )
    })
  )

/** The approvals database at `<workspace>/.state/approvals.sqlite`. */
export const ApprovalsStoreLive = Layer.unwrapEffect(
  Effect.map(
    Workspace,
    (workspace) => ApprovalsStoreSqlite(NodePath.join(workspace.root, ".state", "approvals.sqlite"))
  )
)
