import { Effect, Layer, Option, ParseResult } from "effect"
import { createHash } from "node:crypto"
import { auditFileOf, type AuditQuery, matchesQuery } from "../../domain/AuditQuery.js"
import { type AuditRecord, decodeAuditRecord, type SealedRecord } from "../../domain/AuditRecord.js"
import { AuditError } from "../../domain/Errors.js"
import { AuditLog } from "../../services/AuditLog.js"

/**
 * The audit log in memory: records validated and chained like the real one, not signed, not durable. For
 * tests of the code that writes audit records; `fail` makes every append fail (a full disk).
 */
export const makeAuditLogMemory = (options: { readonly fail?: boolean } = {}) =>
  Effect.sync(() => {
    const full = new AuditError({ path: "<memory>", reason: "Io", message: "no space left on device (simulated)" })
    const records: Array<SealedRecord> = []
    const last = new Map<string, { seq: number; hash: string }>()
    const append = (record: AuditRecord) =>
      Effect.suspend(() => {
        if (options.fail === true) {
          return Effect.fail(full)
        }
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
        const file = auditFileOf(record)
        const previous = last.get(file) ?? { seq: 0, hash: "genesis" }
        const sealed = { ...record, seq: previous.seq + 1, prev: previous.hash, sig: "unsigned" } as SealedRecord
        last.set(file, { seq: sealed.seq, hash: createHash("sha256").update(JSON.stringify(sealed)).digest("hex") })
        records.push(sealed)
        return Effect.void
      })
    const query = (query: AuditQuery) =>
      Effect.sync(() => records.filter(matchesQuery(query)).reverse().slice(0, query.limit))
    const verifyIntegrity = () =>
      Effect.succeed({
        ok: true,
        files: [...last].map(([file, { seq }]) => ({ file, records: seq })),
        problems: [],
        signatures: "all_epochs" as const
      })
    const ready = options.fail === true ? Effect.fail(full) : Effect.void
    const lastFailure = Effect.succeed(options.fail === true ? Option.some(full) : Option.none())
    return AuditLog.of({ ready, lastFailure, append, query, verifyIntegrity })
  })

export const AuditLogMemory = Layer.effect(AuditLog, makeAuditLogMemory())
