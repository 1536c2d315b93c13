import { sha256Hex } from "./Sha256.js"

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
  const keys = Object.keys(record).sort()
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
