import { Effect, Schema } from "effect"
import * as NodeFs from "node:fs/promises"
import { onFirstCall } from "../../domain/OnFirstCall.js"
import type { IntegrityProblem } from "../../services/AuditLog.js"
import type { EpochKey } from "./Keys.js"
import { fileError, forEachLine, readTail } from "./Lines.js"
import { genesisOf, parseLine, sealLine, sha256, signatureMatches } from "./Seal.js"

/**
 * Signed checkpoints, kept outside the audit folder (`<keyDir>/audit-checkpoints.jsonl`): each line names every
 * chain's head (file, last seq, hash of the last line) at a moment, and is itself hash-chained and signed
 * with the epoch's key. A chain alone cannot tell that its last records were cut off; a checkpoint can.
 *
 *   {"at":"…","reason":"approval",
 *    "heads":[{"chain":"approvals.jsonl","file":"approvals.jsonl","seq":41,"hash":"…"}],
 *    "seq":7,"prev":"…","epoch":20567,"sig":"…"}
 */
export const CHECKPOINT_CHAIN = "checkpoints"

export const ChainHead = Schema.Struct({
  chain: Schema.String,
  file: Schema.String,
  seq: Schema.Number,
  hash: Schema.String
})
export type ChainHead = typeof ChainHead.Type

export const CheckpointReason = Schema.Literal("approval", "denial", "budget_override", "interval", "count", "close")
export type CheckpointReason = typeof CheckpointReason.Type

const CheckpointLine = Schema.Struct({
  at: Schema.String,
  reason: CheckpointReason,
  heads: Schema.Array(ChainHead),
  seq: Schema.Number,
  prev: Schema.String,
  epoch: Schema.Number,
  sig: Schema.String
})
export type Checkpoint = typeof CheckpointLine.Type & { readonly line: number }
const decodeCheckpoint = onFirstCall(() => Schema.decodeUnknownOption(CheckpointLine))

/** The checkpoint log's writer; `open` cuts a torn last line and says how many bytes it cut. */
export const makeCheckpointWriter = (path: string) =>
  Effect.gen(function*() {
    const error = fileError(path, "cannot write the audit checkpoint")
    const opened = yield* Effect.tryPromise({
      try: async () => {
        let tail = await readTail(path).catch((cause: NodeJS.ErrnoException) => {
          if (cause.code === "ENOENT") return undefined
          throw cause
        })
        let cut = 0
        const torn = tail !== undefined &&
          (tail.partial.length > 0 || (tail.last !== undefined && parseLine(tail.last.bytes) === undefined))
        if (tail !== undefined && torn) {
          const keep = tail.partial.length > 0 ? tail.size - tail.partial.length : tail.last!.start
          cut = tail.size - keep
          await NodeFs.truncate(path, keep)
          tail = await readTail(path)
        }
        const handle = await NodeFs.open(path, "a", 0o600)
        const last = tail?.last === undefined ? undefined : parseLine(tail.last.bytes)
        return {
          handle,
          cut,
          size: tail === undefined ? 0 : tail.size,
          seq: typeof last?.seq === "number" ? last.seq : 0,
          hash: tail?.last === undefined ? genesisOf(CHECKPOINT_CHAIN) : sha256(tail.last.bytes)
        }
      },
      catch: error
    })
    yield* Effect.addFinalizer(() => Effect.promise(() => opened.handle.close()))
    let seq = opened.seq
    let hash = opened.hash
    let size = opened.size

    /**
     * The next checkpoint's line, sealed now with `key` (which may be wiped once the epoch moves on): `append`
     * writes it later. Only one sealed line may be pending at a time: the next is sealed after it is appended.
     */
    const seal = (heads: ReadonlyArray<ChainHead>, reason: CheckpointReason, at: string, key: EpochKey) =>
      Effect.try({
        try: () =>
          sealLine({ at, reason, heads }, { seq: seq + 1, prev: hash, epoch: key.epoch }, key.key, "checkpoint"),
        catch: error
      })

    /** Appends a line `seal` made and syncs the file; the chain moves on only once it is on the disk. */
    const append = (line: string) =>
      Effect.tryPromise({
        try: async () => {
          const bytes = Buffer.from(line + "\n")
          await opened.handle.appendFile(bytes)
          await opened.handle.sync()
          seq += 1
          hash = sha256(line)
          size += bytes.length
        },
        catch: error
      })

    const write = (heads: ReadonlyArray<ChainHead>, reason: CheckpointReason, at: string, key: EpochKey) =>
      Effect.flatMap(seal(heads, reason, at, key), append)

    return { path, cut: opened.cut, seal, append, write, size: () => size } as const
  })

/**
 * Reads and checks the checkpoint log: its chain, its signatures (where `keyFor` knows the epoch's key) and a
 * torn last line. Only checkpoints that pass are returned as anchors.
 */
export const readCheckpoints = (
  path: string,
  keyFor: (epoch: number) => Buffer | undefined,
  options: { readonly limit?: number | undefined; readonly everyEpoch: boolean }
) =>
  Effect.tryPromise({
    try: async () => {
      const checkpoints: Array<Checkpoint> = []
      const problems: Array<IntegrityProblem> = []
      const problem = (line: number, kind: IntegrityProblem["problem"], detail: string) =>
        problems.push({ file: path, line, problem: kind, detail })
      let previous = genesisOf(CHECKPOINT_CHAIN)
      let expected = 1
      let epoch = 0
      let number = 0
      const lines: Array<{ bytes: Buffer; terminated: boolean }> = []
      await forEachLine(path, (bytes, terminated) => lines.push({ bytes, terminated }), { limit: options.limit }).catch(
        (cause: NodeJS.ErrnoException) => {
          if (cause.code !== "ENOENT") throw cause
        }
      )
      for (const { bytes, terminated } of lines) {
        number++
        const isLast = number === lines.length
        const decoded = decodeCheckpoint(parseLine(bytes))
        if (decoded._tag === "None" || !terminated) {
          if (isLast) problem(number, "torn_tail", "the last checkpoint was cut short (a crash mid-write)")
          else problem(number, "malformed", "not a checkpoint")
          previous = sha256(bytes)
          expected++
          continue
        }
        const checkpoint = decoded.value
        let trusted = true
        if (checkpoint.seq !== expected || checkpoint.prev !== previous) {
          problem(number, "chain_break", `checkpoint ${checkpoint.seq} does not follow checkpoint ${expected - 1}`)
          trusted = false
        }
        if (checkpoint.epoch < epoch) {
          problem(number, "bad_signature", `sealed with the key of epoch ${checkpoint.epoch} after one of ${epoch}`)
          trusted = false
        }
        const key = keyFor(checkpoint.epoch)
        if (key === undefined && options.everyEpoch) {
          problem(number, "bad_signature", `no key for epoch ${checkpoint.epoch}: it is before the seed's first epoch`)
          trusted = false
        } else if (key !== undefined && !signatureMatches(bytes, key, "checkpoint")) {
          problem(number, "bad_signature", `the signature does not match the key of epoch ${checkpoint.epoch}`)
          trusted = false
        }
        if (trusted) checkpoints.push({ ...checkpoint, line: number })
        epoch = Math.max(epoch, checkpoint.epoch)
        previous = sha256(bytes)
        expected = checkpoint.seq + 1
      }
      return { checkpoints, problems, lines: lines.length }
    },
    catch: fileError(path, "cannot read the audit checkpoints")
  })
