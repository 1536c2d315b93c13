import { Effect, Layer, Option, ParseResult } from "effect"
import { auditFileOf, type AuditQuery, matchesQuery } from "../../domain/AuditQuery.js"
import { type AuditRecord, decodeAuditRecord, type SealedRecord } from "../../domain/AuditRecord.js"
import { AuditError } from "../../domain/Errors.js"
import { isoAt } from "../../domain/Time.js"
import { AuditLog, type IntegrityProblem } from "../../services/AuditLog.js"
import { chainOfFile, genesisOf, sha256 } from "./Seal.js"
import { MONOTONIC_SLACK_MS } from "./Verify.js"

const failure = (reason: "Io" | "Closed", message: string) => new AuditError({ path: "<memory>", reason, message })

/**
 * The log in memory and whether it is closed: records validated, chained (the monthly files are one chain)
 * and checked for time going back like the real one, not signed, not durable.
 */
const makeMemoryLog = (options: { readonly fail?: boolean }) => {
  const records: Array<SealedRecord> = []
  const chains = new Map<string, { seq: number; hash: string; lastAt: number }>()
  const lines = new Map<string, number>()
  const problems: Array<IntegrityProblem> = []
  const full = failure("Io", "no space left on device (simulated)")
  let closed = false
  /** Why the last append or readiness check failed, until one succeeds; a log that always fails starts so. */
  let lastFailure = options.fail === true ? Option.some(full) : Option.none<AuditError>()
  const watched = <A>(effect: Effect.Effect<A, AuditError>) =>
    effect.pipe(
      Effect.tap(() => Effect.sync(() => void (lastFailure = Option.none()))),
      Effect.tapError((error) => Effect.sync(() => void (lastFailure = Option.some(error))))
    )

  const ready = watched(Effect.suspend(() =>
    options.fail === true
      ? Effect.fail(full)
      : closed
      ? Effect.fail(failure("Closed", "the audit log is closed"))
      : Effect.void
  ))

  const append = (record: AuditRecord) =>
    Effect.suspend(() => {
      if (options.fail === true) return watched(Effect.fail(full))
      const decoded = decodeAuditRecord(record)
      if (decoded._tag === "Left") {
        return Effect.fail(
          new AuditError({
            path: "<memory>",
            reason: "InvalidRecord",
            message: `invalid ${String((record as { kind?: unknown }).kind)} record: ${
              ParseResult.TreeFormatter.formatErrorSync(decoded.left)
            }`,
            cause: decoded.left
          })
        )
      }
      if (closed) return watched(Effect.fail(failure("Closed", "the audit log is closed")))
      const file = auditFileOf(decoded.right)
      const chain = chainOfFile(file) ?? file
      const previous = chains.get(chain) ?? { seq: 0, hash: genesisOf(chain), lastAt: Number.NEGATIVE_INFINITY }
      const sealed: SealedRecord = { ...decoded.right, seq: previous.seq + 1, prev: previous.hash, sig: "unsigned" }
      const line = (lines.get(file) ?? 0) + 1
      const at = Date.parse(sealed.at)
      if (at < previous.lastAt - MONOTONIC_SLACK_MS) {
        problems.push({
          file,
          line,
          problem: "non_monotonic",
          detail: `${sealed.at} is earlier than ${isoAt(previous.lastAt)} before it`
        })
      }
      chains.set(chain, {
        seq: sealed.seq,
        hash: sha256(JSON.stringify(sealed)),
        lastAt: Math.max(previous.lastAt, at)
      })
      lines.set(file, line)
      records.push(sealed)
      return watched(Effect.void)
    })

  /** Newest first: the latest `at`, and of records with the same time the latest appended. */
  const query = (query: AuditQuery) =>
    Effect.sync(() =>
      query.limit <= 0 ? [] : records
        .filter(matchesQuery(query))
        .reverse()
        .sort((a, b) => Date.parse(b.at) - Date.parse(a.at))
        .slice(0, Math.floor(query.limit))
    )

  // Every record is at hand: the instant the traces started at or after bounds no search here.
  const unaudited = (traceIds: ReadonlySet<string>, _since: number) =>
    Effect.sync(() => {
      const missing = new Set(traceIds)
      for (const record of records) {
        if (record.kind === "trace") missing.delete(record.trace_id)
      }
      return missing
    })

  const verifyIntegrity = (verifyOptions?: { readonly seed?: Uint8Array | undefined }) =>
    Effect.sync(() => ({
      ok: problems.length === 0,
      files: [...lines].sort(([a], [b]) => a.localeCompare(b)).map(([file, records]) => ({ file, records })),
      problems: problems.slice(),
      signatures: verifyOptions?.seed === undefined ? "current_epoch" as const : "all_epochs" as const
    }))

  return {
    log: AuditLog.of({
      ready,
      lastFailure: Effect.sync(() => lastFailure),
      append,
      query,
      unaudited,
      verifyIntegrity
    }),
    close: Effect.sync(() => void (closed = true))
  }
}

/**
 * The audit log in memory, for tests of the code that writes audit records; `fail` makes every append fail
 * (a full disk). This one is never closed; the layer's log is closed with the layer.
 */
export const makeAuditLogMemory = (options: { readonly fail?: boolean } = {}) =>
  Effect.sync(() => makeMemoryLog(options).log)

export const AuditLogMemory = Layer.scoped(
  AuditLog,
  Effect.map(
    Effect.acquireRelease(Effect.sync(() => makeMemoryLog({})), ({ close }) => close),
    ({ log }) => log
  )
)
