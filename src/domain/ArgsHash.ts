import { sha256Hex } from "./Sha256.js"

/** Beyond this many keys an object's keys are sorted by `Array.prototype.sort`. */
const INSERTION_SORT_MAX = 16

/** Sorts keys in UTF-16 code-unit order, the order `Array.prototype.sort` gives strings, in place. */
const sortKeys = (keys: Array<string>): void => {
  // Most objects here have a handful of keys: they are sorted by insertion, because V8's sort allocates its merge
  // state (several hundred bytes) on every call, ten times the keys array itself.
  if (keys.length > INSERTION_SORT_MAX) {
    keys.sort()
    return
  }
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!
    let j = i - 1
    while (j >= 0 && keys[j]! > key) {
      keys[j + 1] = keys[j]!
      j--
    }
    keys[j + 1] = key
  }
}

// Keys as JSON.stringify quotes them, for the keys met most (the same few names in every message and every call's
// arguments): a lookup costs a fraction of quoting. Bounded: arguments come from the model, their keys from anyone.
const quotedKeys = new Map<string, string>()
const QUOTED_KEYS_MAX = 4096
const quoted = (key: string): string => {
  const known = quotedKeys.get(key)
  if (known !== undefined) return known
  const made = JSON.stringify(key)
  if (quotedKeys.size < QUOTED_KEYS_MAX) quotedKeys.set(key, made)
  return made
}

/** A value with nothing inside, that JSON.stringify writes as canonicalJson does (undefined: left out, or null). */
const isLeaf = (value: unknown): boolean => {
  const type = typeof value
  return type === "string" || type === "number" || type === "boolean" || value === null || value === undefined
}

/**
 * An array JSON.stringify writes as canonicalJson does: a plain array of leaves, without holes (canonicalJson
 * leaves a hole empty, JSON.stringify writes null) and without a `toJSON` of its own.
 */
const isLeafArray = (array: ReadonlyArray<unknown>): boolean => {
  if (Object.getPrototypeOf(array) !== Array.prototype) return false
  if (typeof (array as { readonly toJSON?: unknown }).toJSON === "function") return false
  for (let i = 0; i < array.length; i++) {
    if (!(i in array) || !isLeaf(array[i])) return false
  }
  return true
}

/**
 * An object JSON.stringify writes as canonicalJson does: a plain object (not a boxed string, a date or any other
 * with a `toJSON` or a text of its own; a `toJSON` of its own is a function, not a leaf) whose keys are already in
 * order and whose values are leaves.
 */
const isSortedLeafRecord = (record: Record<string, unknown>, keys: ReadonlyArray<string>): boolean => {
  const prototype: unknown = Object.getPrototypeOf(record)
  if (prototype !== Object.prototype && prototype !== null) return false
  for (let i = 0; i < keys.length; i++) {
    if ((i > 0 && keys[i - 1]! >= keys[i]!) || !isLeaf(record[keys[i]!])) return false
  }
  return true
}

/**
 * JSON with object keys sorted at every level: the same arguments always give the same text. Keys are ordered by
 * UTF-16 code units, properties whose value is `undefined` are left out, and anything JSON cannot express is
 * `null`. Built by appending to one string: this runs on every tool call and every message of every step. An
 * array of leaves, or an object of leaves whose keys are already in order, is the text JSON.stringify gives.
 */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null"
  if (Array.isArray(value)) {
    if (isLeafArray(value)) return JSON.stringify(value)
    let out = "["
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ","
      // A hole in a sparse array is left empty, as `Array.prototype.join` leaves it.
      if (i in value) out += canonicalJson(value[i])
    }
    return `${out}]`
  }
  const record = value as Record<string, unknown>
  const keys = Object.keys(record)
  if (isSortedLeafRecord(record, keys)) return JSON.stringify(record)
  sortKeys(keys)
  let out = "{"
  let first = true
  for (const key of keys) {
    const v = record[key]
    if (v === undefined) continue
    if (!first) out += ","
    first = false
    out += `${quoted(key)}:${canonicalJson(v)}`
  }
  return `${out}}`
}

/** `sha256:<hex>` of the canonical JSON of a tool call's arguments: what is approved is what runs. */
export const argsHash = (args: unknown): string => `sha256:${sha256Hex(canonicalJson(args))}`

/** At launch: the arguments about to run are the arguments that were approved. */
export const verifyApprovedArgs = (
  verdict: { readonly granted: boolean; readonly argsHash: string },
  argsNow: unknown
): boolean => verdict.granted && argsHash(argsNow) === verdict.argsHash
