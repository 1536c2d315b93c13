/**
 * Values shorter than this are refused by the secret store: a short value also occurs in ordinary text, and
 * replacing every occurrence would both mangle outputs and reveal the value by where the markers fall.
 */
export const MIN_SECRET_LENGTH = 8

/** The marker a secret value is replaced by in any output. */
export const secretMarker = (name: string): string => `[secret:${name}]`

/**
 * The forms a value may take when a tool echoes it: as is, escaped inside a JSON string, percent-encoded in a
 * URL, and base64 (as in a Basic authorization header). Forms shorter than the minimum are left out.
 */
export const secretForms = (value: string): ReadonlyArray<string> => {
  const forms = new Set<string>([value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)])
  const base64 = Buffer.from(value, "utf8").toString("base64")
  forms.add(base64)
  forms.add(base64.replace(/=+$/, ""))
  return [...forms].filter((form) => form.length >= MIN_SECRET_LENGTH)
}

/**
 * The known secret values of one process and how to replace them: every form of every value, longest first so
 * that a value containing another is replaced whole. Adding is idempotent; the order is rebuilt on demand.
 */
export const makeRedactionSet = () => {
  const names = new Map<string, string>()
  let ordered: ReadonlyArray<readonly [string, string]> | undefined
  const add = (name: string, value: string): void => {
    for (const form of secretForms(value)) {
      if (names.get(form) === name) continue
      names.set(form, name)
      ordered = undefined
    }
  }
  const redact = (text: string): string => {
    if (names.size === 0 || text.length < MIN_SECRET_LENGTH) return text
    ordered ??= [...names].sort(([a], [b]) => b.length - a.length)
    let result = text
    for (const [form, name] of ordered) {
      if (result.includes(form)) result = result.split(form).join(secretMarker(name))
    }
    return result
  }
  return {
    add,
    redact,
    get size() {
      return names.size
    }
  }
}
