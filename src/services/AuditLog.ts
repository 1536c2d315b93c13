import { Context } from "effect"
import type { Effect, Option } from "effect"
import type { AuditQuery } from "../domain/AuditQuery.js"
import type { AuditRecord, SealedRecord } from "../domain/AuditRecord.js"
export type { AuditQuery } from "../domain/AuditQuery.js"
import type { AuditError } from "../domain/Errors.js"

export interface IntegrityProblem {
  readonly file: string
  /** 1-based; 0 when the problem is the file as a whole (e.g. truncated before its checkpoint). */
  readonly line: number
  readonly problem:
    | "malformed"
    | "torn_tail"
    | "chain_break"
    | "bad_signature"
    | "non_monotonic"
    | "truncated"
    | "unanchored"
  readonly detail: string
}

export interface IntegrityReport {
  readonly ok: boolean
  readonly files: ReadonlyArray<{ readonly file: string; readonly records: number }>
  readonly problems: ReadonlyArray<IntegrityProblem>
  /** What the signatures were checked with: every epoch (with the seed) or only the current one. */
  readonly signatures: "all_epochs" | "current_epoch"
}

/** The append-only, signed audit log: myclaw keeps its own record and cannot hide it. */
export class AuditLog extends Context.Tag("myclaw/AuditLog")<AuditLog, {
  /**
   * Succeeds when a record could be appended now (the folder locked for writing, the key and the chains
   * read); a turn checks it before it pays for a model, so that nothing runs that cannot be recorded.
   */
  readonly ready: Effect.Effect<void, AuditError>
  /** Why the last append or readiness check failed, until one succeeds again; none while the log works. */
  readonly lastFailure: Effect.Effect<Option.Option<AuditError>>
  /** Durable (per the fsync policy) when it succeeds; a failure means the action it records must not run. */
  readonly append: (record: AuditRecord) => Effect.Effect<void, AuditError>
  /** Newest first, across monthly files and archives. */
  readonly query: (query: AuditQuery) => Effect.Effect<ReadonlyArray<SealedRecord>, AuditError>
  /**
   * Of the traces `traceIds`, all started at or after `since` (epoch milliseconds), those the log holds no trace
   * record of: what a start asks of the newest traces. The records of such traces are no older than `since`:
   * read from the newest back, they cost what they weigh, whatever the log's size.
   */
  readonly unaudited: (
    traceIds: ReadonlySet<string>,
    since: number
  ) => Effect.Effect<ReadonlySet<string>, AuditError>
  readonly verifyIntegrity: (
    options?: { readonly seed?: Uint8Array | undefined }
  ) => Effect.Effect<IntegrityReport, AuditError>
}>() {}
