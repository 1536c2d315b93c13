import { sha256Hex } from "./Sha256.js"

/** Beyond this many keys an object's keys are sorted by `Array.prototype.sort`. */
const INSERTION_SORT_MAX = 16

/**
 * The object's own enumerable keys in UTF-16 code-unit order, the order `Array.prototype.sort` gives strings.
 * Most objects here have a handful of keys: they are sorted in place by insertion, because V8's sort allocates
 * its merge state (several hundred bytes) on every call, ten times the keys array itself, for every object of
 * every message fingerprinted.
 */
const sortedKeys = (record: object): Array<string> => {
  const keys = Object.keys(record)
  if (keys.length > INSERTION_SORT_MAX) return keys.sort()
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!
    let j = i - 1
    while (j >= 0 && keys[j]! > key) {
      keys[j + 1] = keys[j]!
      j--
    }
    keys[j + 1] = key
  }
  return keys
}

/**
 * JSON with object keys sorted at every level: the same arguments always give the same text. Keys are ordered by
 * UTF-16 code units, properties whose value is `undefined` are left out, and anything JSON cannot express is
 * `null`. Built by appending to one string: this runs on every tool call and every message of every step.
 */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null"
  if (Array.isArray(value)) {
    let out = "["
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ","
      // A hole in a sparse array is left empty, as `Array.prototype.join` leaves it.
      if (i in value) out += canonicalJson(value[i])
    }
    return `${out}]`
  }
  const record = value as Record<string, unknown>
  const keys = sortedKeys(record)
  let out = "{"
  let first = true
  for (const key of keys) {
    const v = record[key]
    if (v === undefined) continue
    if (!first) out += ","
    first = false
    out += `${JSON.stringify(key)}:${canonicalJson(v)}`
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
