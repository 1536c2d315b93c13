import { createHmac, timingSafeEqual } from "node:crypto"
import { sha256Hex } from "../../domain/Sha256.js"

/**
 * How a record becomes a signed line. The signature covers the exact bytes of the line up to `,"sig"`
 * (no re-serialisation, so nothing is left to canonicalise), and `prev` is the SHA-256 of the previous line's
 * exact bytes (without its newline): what is hashed and signed is what is on disk.
 *
 *   {...record,"seq":12,"prev":"<sha256 of line 11>","epoch":20567,"sig":"<HMAC-SHA256 of everything before ,"sig">"}
 */

/** Every monthly file (`YYYY-MM.jsonl`, compressed or not) is one chain; every other file is a chain of its own. */
export const MONTHLY_CHAIN = "monthly"
const MONTHLY_FILE = /^(\d{4}-\d{2})\.jsonl(\.gz)?$/
const CHAIN_FILE = /^[a-z][a-z0-9_-]*\.jsonl$/

/** The month of a monthly file name (`2026-04.jsonl` or `2026-04.jsonl.gz`), or undefined. */
export const monthOfFile = (file: string): string | undefined => MONTHLY_FILE.exec(file)?.[1]

/** The chain an audit file belongs to, or undefined for a file that is not an audit log (index, budget, lock). */
export const chainOfFile = (file: string): string | undefined =>
  monthOfFile(file) !== undefined ? MONTHLY_CHAIN : CHAIN_FILE.test(file) ? file : undefined

export const sha256 = sha256Hex

/** The `prev` of a chain's first record: bound to the chain, so a first line cannot be moved to another file. */
export const genesisOf = (chain: string): string => sha256(`myclaw-audit-genesis\n${chain}`)

/** Signatures of records and of checkpoints are domain-separated, so one can never pass for the other. */
export type SealDomain = "record" | "checkpoint"

export const hmac = (key: Uint8Array, domain: SealDomain, body: Uint8Array | string): string =>
  createHmac("sha256", key).update(`myclaw-audit-${domain}\n`).update(body).digest("hex")

export interface SealFields {
  readonly seq: number
  readonly prev: string
  readonly epoch: number
}

/**
 * Throws on a number JSON cannot write (JSON.stringify would write `null`), wherever it is in the value, as
 * JSON.stringify walks it: a replacer function doing the same check makes JSON.stringify take its slow path,
 * twice the time of this walk and a plain JSON.stringify together, on every record.
 */
const assertFiniteNumbers = (value: unknown, replaced = false): void => {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`${value} has no JSON form`)
    return
  }
  if (typeof value !== "object" || value === null) return
  // JSON.stringify calls a value's toJSON once, and writes what it returns as it is.
  const toJson = (value as { readonly toJSON?: unknown }).toJSON
  if (!replaced && typeof toJson === "function") return assertFiniteNumbers(toJson.call(value), true)
  if (Array.isArray(value)) {
    for (const item of value) assertFiniteNumbers(item)
    return
  }
  for (const key in value) {
    if (Object.hasOwn(value, key)) assertFiniteNumbers((value as Record<string, unknown>)[key])
  }
}

/** `{ ...fields, seq, prev, epoch }` as JSON: the same keys in the same order (the record's own fields are plain data). */
const mergedJson = (fields: object, seal: SealFields): string => {
  // Object.assign rather than a spread: V8 11 makes a hidden class of its own for each object whose keys are added
  // after a leading spread. Onto an object without a prototype, so that a field named `__proto__` (parsed JSON
  // can hold one) is copied as a field, as the record's own JSON has it, instead of setting the prototype.
  const sealed = Object.assign(Object.create(null) as object, fields, {
    seq: seal.seq,
    prev: seal.prev,
    epoch: seal.epoch
  })
  assertFiniteNumbers(sealed)
  return JSON.stringify(sealed)
}

/**
 * The same text as `mergedJson`, in the common case made from the record's own JSON with the seal's three fields
 * written after it: the merged object is not made (copying a record's twenty-odd fields onto a new object leaves one
 * that JSON.stringify serialises about twice as slowly), and the walk that looks for numbers JSON cannot write runs
 * only when the text has a `null` in it (JSON.stringify writes such a number as `null`, so where there is none,
 * there was none). A record with a field of the seal's name (its place is the record's) or a `toJSON` takes the
 * general way.
 */
const unsignedJson = (fields: object, seal: SealFields): string => {
  if (
    Object.hasOwn(fields, "seq") || Object.hasOwn(fields, "prev") || Object.hasOwn(fields, "epoch") ||
    typeof (fields as { readonly toJSON?: unknown }).toJSON === "function" ||
    !Number.isFinite(seal.seq) || !Number.isFinite(seal.epoch)
  ) return mergedJson(fields, seal)
  const own = JSON.stringify(fields)
  if (own[0] !== "{") return mergedJson(fields, seal)
  if (own.includes("null")) assertFiniteNumbers(fields)
  const tail = `"seq":${seal.seq},"prev":${JSON.stringify(seal.prev)},"epoch":${seal.epoch}}`
  return own === "{}" ? `{${tail}` : `${own.slice(0, -1)},${tail}`
}

/** The signed line of `fields` (a record or a checkpoint), without its newline. Throws on a non-finite number. */
export const sealLine = (
  fields: object,
  seal: SealFields,
  key: Uint8Array,
  domain: SealDomain = "record"
): string => {
  const unsigned = unsignedJson(fields, seal)
  return `${unsigned.slice(0, -1)},"sig":"${hmac(key, domain, unsigned)}"}`
}

const SIG_SUFFIX_LENGTH = ",\"sig\":\"".length + 64 + "\"}".length
const SIG_SUFFIX = /^,"sig":"([0-9a-f]{64})"\}$/

/** Splits a line into the bytes its signature covers and the signature, or undefined when it is not sealed. */
export const openLine = (line: Uint8Array): { readonly unsigned: Buffer; readonly sig: string } | undefined => {
  if (line.length <= SIG_SUFFIX_LENGTH) return undefined
  const bytes = Buffer.from(line.buffer, line.byteOffset, line.byteLength)
  const suffix = SIG_SUFFIX.exec(bytes.toString("latin1", bytes.length - SIG_SUFFIX_LENGTH))
  if (suffix === null) return undefined
  const unsigned = Buffer.concat([bytes.subarray(0, bytes.length - SIG_SUFFIX_LENGTH), Buffer.from("}")])
  return { unsigned, sig: suffix[1]! }
}

/** Whether the line's signature was made with `key`. */
export const signatureMatches = (line: Uint8Array, key: Uint8Array, domain: SealDomain = "record"): boolean => {
  const opened = openLine(line)
  if (opened === undefined) return false
  const expected = Buffer.from(hmac(key, domain, opened.unsigned), "hex")
  return timingSafeEqual(expected, Buffer.from(opened.sig, "hex"))
}

/** A line parsed as JSON, or undefined when it is not a JSON object. */
export const parseLine = (line: Uint8Array): Record<string, unknown> | undefined => {
  try {
    const value: unknown = JSON.parse(Buffer.from(line.buffer, line.byteOffset, line.byteLength).toString("utf8"))
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? value as Record<string, unknown>
      : undefined
  } catch {
    return undefined
  }
}
