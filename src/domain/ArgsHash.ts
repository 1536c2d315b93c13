import { createHash } from "node:crypto"

/** JSON with object keys sorted at every level: the same arguments always give the same text. */
export const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

/** `sha256:<hex>` of the canonical JSON of a tool call's arguments: what is approved is what runs. */
export const argsHash = (args: unknown): string =>
  `sha256:${createHash("sha256").update(canonicalJson(args)).digest("hex")}`

/** At launch: the arguments about to run are the arguments that were approved. */
export const verifyApprovedArgs = (
  verdict: { readonly granted: boolean; readonly argsHash: string },
  argsNow: unknown
): boolean => verdict.granted && argsHash(argsNow) === verdict.argsHash
