import { Effect, Either, ParseResult, Schema } from "effect"
import { auditFileOf } from "../../domain/AuditQuery.js"
import { decodeAuditRecord, isExactSealedRecord, Sealed } from "../../domain/AuditRecord.js"
import { onFirstCall } from "../../domain/OnFirstCall.js"
import { isoAt } from "../../domain/Time.js"
import type { IntegrityProblem, IntegrityReport } from "../../services/AuditLog.js"
import { type Checkpoint, readCheckpoints } from "./Checkpoints.js"
import { epochOf } from "./Keys.js"
import { type AuditFile, fileError, forEachLine, joinPath, listChains } from "./Lines.js"
import { chainOfFile, genesisOf, parseLine, sha256, signatureMatches } from "./Seal.js"

/** How far back a record's `at` may be from its predecessor's before it counts as non-monotonic (concurrent turns). */
export const MONOTONIC_SLACK_MS = 60_000

export interface VerifyOptions {
  readonly auditDir: string
  readonly checkpointFile: string
  /** The key of an epoch, when known: every epoch's with the seed, else only the current one. */
  readonly keyFor: (epoch: number) => Buffer | undefined
  readonly signatures: IntegrityReport["signatures"]
  /** Bytes of each file to read (the writer's view, so that a line being written is not taken for a torn one). */
  readonly limits: ReadonlyMap<string, number>
}

const decodeSealed = onFirstCall(() => Schema.decodeUnknownEither(Sealed))

interface Place {
  readonly file: string
  readonly line: number
  readonly hash: string
  readonly seq: number
}

const describe = (error: ParseResult.ParseError) =>
  ParseResult.TreeFormatter.formatErrorSync(error).split("\n").slice(0, 3).join(" ").slice(0, 240)

/** One chain, line by line: signature, chain links, timestamps, placement and checkpoint anchors. */
const makeChainCheck = (
  chain: string,
  options: VerifyOptions,
  anchors: ReadonlyArray<Checkpoint>,
  problems: Array<IntegrityProblem>
) => {
  const anchored = new Map<number, { hash: string; checkpoint: Checkpoint }>()
  let lastAnchor: { seq: number; file: string; at: string } | undefined
  for (const checkpoint of anchors) {
    for (const head of checkpoint.heads) {
      if (head.chain !== chain) continue
      anchored.set(head.seq, { hash: head.hash, checkpoint })
      lastAnchor = { seq: head.seq, file: head.file, at: checkpoint.at }
    }
  }
  const report = (file: string, line: number, problem: IntegrityProblem["problem"], detail: string) =>
    problems.push({ file, line, problem, detail })
  let p1: Place = { file: "", line: 0, hash: genesisOf(chain), seq: 0 }
  let p2: Place | undefined
  let maxSeq = 0
  let lastAt = Number.NEGATIVE_INFINITY
  let lastEpoch = Number.NEGATIVE_INFINITY
  let unanchored = 0
  let firstUnanchored: { file: string; line: number } | undefined

  const advance = (place: Place) => {
    p2 = p1
    p1 = place
  }

  /** Returns whether the line was a record. */
  const line = (file: string, number: number, bytes: Buffer, terminated: boolean, tail: boolean): boolean => {
    const hash = sha256(bytes)
    const json = parseLine(bytes)
    if (tail && (!terminated || json === undefined)) {
      report(file, number, "torn_tail", terminated ? "the last line is not JSON" : "the last line has no newline")
      return false
    }
    // A line exactly as the log writes it is its own record and seal; any other is decoded, for the error.
    const exact = json !== undefined && isExactSealedRecord(json)
    const record = json === undefined ? undefined : exact ? Either.right(json) : decodeAuditRecord(json)
    const sealed = json === undefined ? undefined : exact ? Either.right(json) : decodeSealed(json)
    if (json === undefined || record?._tag !== "Right" || sealed?._tag !== "Right") {
      const why = json === undefined
        ? (terminated ? "not JSON" : "no newline")
        : record?._tag === "Left"
        ? describe(record.left)
        : sealed?._tag === "Left"
        ? `not sealed: ${describe(sealed.left)}`
        : "invalid"
      report(file, number, "malformed", why)
      maxSeq += 1
      advance({ file, line: number, hash, seq: maxSeq })
      return false
    }
    const { epoch, prev, seq } = sealed.right
    const at = Date.parse(record.right.at)
    if (epoch === undefined) {
      report(file, number, "bad_signature", "no key epoch: this record was not sealed by the audit log")
    } else {
      const key = options.keyFor(epoch)
      if (key === undefined && options.signatures === "all_epochs") {
        report(file, number, "bad_signature", `no key for epoch ${epoch}: it is before the seed's first epoch`)
      } else if (key !== undefined && !signatureMatches(bytes, key)) {
        report(file, number, "bad_signature", `the signature does not match the key of epoch ${epoch}`)
      } else if (epoch < lastEpoch) {
        const detail = `sealed with the key of epoch ${epoch} after a record of epoch ${lastEpoch}`
        report(file, number, "bad_signature", detail)
      } else if (epoch > epochOf(at) + 1) {
        const days = epoch - epochOf(at)
        report(file, number, "bad_signature", `sealed ${days} days after its date: re-signed with a later key`)
      }
      lastEpoch = Math.max(lastEpoch, epoch)
    }

    const expected = maxSeq + 1
    const previous = p1.line === 0 ? { file, line: number } : p1
    if (seq === expected && prev === p1.hash) {
      // linked
    } else if (p2 !== undefined && prev === p2.hash && seq === p2.seq + 1) {
      report(
        previous.file,
        previous.line,
        "chain_break",
        "this line does not belong here: the next record follows the line before it (inserted or moved)"
      )
    } else if (seq === expected) {
      report(
        previous.file,
        previous.line,
        "chain_break",
        p1.line === 0
          ? "the first record does not start the chain"
          : "this line was modified or replaced: the next record holds a different hash for it"
      )
    } else if (seq > expected) {
      const missing = seq - expected
      report(file, number, "chain_break", `${missing} record(s) missing before this line (seq ${maxSeq} then ${seq})`)
    } else {
      report(file, number, "chain_break", `out of order: seq ${seq} after seq ${maxSeq}`)
    }
    maxSeq = Math.max(maxSeq, seq)

    if (chainOfFile(auditFileOf(record.right)) !== chain) {
      report(file, number, "chain_break", `a ${record.right.kind} record does not belong in ${file}`)
    }
    if (at < lastAt - MONOTONIC_SLACK_MS) {
      const before = isoAt(lastAt)
      report(file, number, "non_monotonic", `${record.right.at} is earlier than ${before} before it`)
    }
    lastAt = Math.max(lastAt, at)

    const anchor = anchored.get(seq)
    if (anchor !== undefined && anchor.hash !== hash) {
      report(file, number, "chain_break", `differs from the record the checkpoint of ${anchor.checkpoint.at} anchored`)
    }
    if (lastAnchor === undefined || seq > lastAnchor.seq) {
      unanchored++
      firstUnanchored ??= { file, line: number }
    }
    advance({ file, line: number, hash, seq })
    return true
  }

  const finish = () => {
    if (lastAnchor !== undefined && maxSeq < lastAnchor.seq) {
      report(
        lastAnchor.file,
        0,
        "truncated",
        maxSeq === 0
          ? `the checkpoint of ${lastAnchor.at} anchored seq ${lastAnchor.seq}, but no record is left`
          : `ends at seq ${maxSeq}, but the checkpoint of ${lastAnchor.at} anchored seq ${lastAnchor.seq}: ` +
            `${lastAnchor.seq - maxSeq} record(s) were cut off`
      )
    }
    if (firstUnanchored !== undefined) {
      report(
        firstUnanchored.file,
        firstUnanchored.line,
        "unanchored",
        lastAnchor === undefined
          ? `${unanchored} record(s) and no checkpoint names this log: a cut could not be told`
          : `${unanchored} record(s) after the last checkpoint (${lastAnchor.at}, seq ${lastAnchor.seq})`
      )
    }
  }

  return { line, finish }
}

/** Checks every chain of the audit folder against the checkpoints; read-only. */
export const verifyAuditDir = (options: VerifyOptions) =>
  Effect.gen(function*() {
    const { checkpointFile } = options
    const checkpoints = yield* readCheckpoints(checkpointFile, options.keyFor, {
      limit: options.limits.get(checkpointFile),
      everyEpoch: options.signatures === "all_epochs"
    })
    const problems: Array<IntegrityProblem> = [...checkpoints.problems]
    const chains = yield* listChains(options.auditDir)
    const anchoredChains = new Set(checkpoints.checkpoints.flatMap((c) => c.heads.map((head) => head.chain)))
    const files: Array<{ file: string; records: number }> = []
    for (const chain of new Set([...chains.keys(), ...anchoredChains])) {
      const check = makeChainCheck(chain, options, checkpoints.checkpoints, problems)
      const list: ReadonlyArray<AuditFile> = chains.get(chain) ?? []
      for (const [index, file] of list.entries()) {
        const path = joinPath(options.auditDir, file.name)
        const isLastFile = index === list.length - 1
        let records = 0
        let number = 0
        let held: { bytes: Buffer; terminated: boolean } | undefined
        const flush = (tail: boolean) => {
          if (held === undefined) return
          if (check.line(file.name, number, held.bytes, held.terminated, tail)) records++
          held = undefined
        }
        yield* Effect.tryPromise({
          try: () =>
            forEachLine(path, (bytes, terminated) => {
              flush(false)
              number++
              held = { bytes, terminated }
            }, { limit: options.limits.get(file.name) }),
          catch: fileError(path, "cannot read the audit file")
        })
        flush(isLastFile)
        files.push({ file: file.name, records })
      }
      check.finish()
    }
    return {
      ok: problems.every((problem) => problem.problem === "unanchored"),
      files,
      problems,
      signatures: options.signatures
    } satisfies IntegrityReport
  })
