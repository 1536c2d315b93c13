import { Either } from "effect"
import type { CachedPlan, PlanAnswer } from "./CachedPlan.js"
import type { Plan } from "./Plan.js"

/** A plan must have served its request this many times before a similar request may reuse it. */
export const AUTOPATH_CONFIRMATIONS = 2

const tokens = (request: string): ReadonlyArray<string> => request.split(" ").filter((token) => token !== "")

/** Shared words over all words (Jaccard) of two normalised requests. */
export const similarity = (a: string, b: string): number => {
  const left = new Set(tokens(a))
  const right = new Set(tokens(b))
  const shared = [...left].filter((token) => right.has(token)).length
  const all = new Set([...left, ...right]).size
  return all === 0 ? 0 : shared / all
}

const HOME_PATH = /(^|[\s"'=])(~\/|\/home\/|\/Users\/|[A-Za-z]:\\Users\\)/
const EMAIL = /[^\s@]+@[^\s@]+\.[^\s@]+/
const PHONE = /\+?\d[\d ().-]{6,}\d/
const NUMBER = /\d+(?:[.,]\d+)?/g

/** Personal values an argument embeds: home paths, addresses, and numbers the user's message gave. */
const personalValues = (value: string, request: string): ReadonlyArray<string> => {
  const found: Array<string> = []
  if (HOME_PATH.test(value)) found.push(`a path under a home folder (${value})`)
  const email = EMAIL.exec(value)
  if (email !== null) found.push(`an address (${email[0]})`)
  else if (PHONE.test(value)) found.push(`a phone number (${value})`)
  for (const number of value.match(NUMBER) ?? []) {
    if (tokens(request).some((token) => token.includes(number))) found.push(`the number ${number} from the request`)
  }
  return found
}

const strings = (value: unknown): ReadonlyArray<string> => {
  if (typeof value === "string") return [value]
  if (typeof value === "number") return [String(value)]
  if (Array.isArray(value)) return value.flatMap(strings)
  if (typeof value === "object" && value !== null) return Object.values(value).flatMap(strings)
  return []
}

const substitute = (value: unknown, swaps: ReadonlyArray<readonly [string, string]>): unknown => {
  if (typeof value === "string") return swaps.reduce((text, [from, to]) => text.split(from).join(to), value)
  if (Array.isArray(value)) return value.map((item) => substitute(item, swaps))
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, swaps)]))
  }
  return value
}

/**
 * A cached plan generalised to a similar request: the words in which the two requests differ (same length,
 * word for word) are the plan's parameters, and each must appear in its arguments, where it is replaced. A plan
 * whose arguments embed a personal value that is not one of those parameters is never generalised.
 */
export const generalise = (
  cached: CachedPlan,
  request: string,
  threshold: number
): Either.Either<{ readonly plan: Plan; readonly answer: PlanAnswer }, string> => {
  if (cached.successes < AUTOPATH_CONFIRMATIONS) {
    return Either.left(`plan ${cached.id} has served ${cached.successes} time(s), fewer than ${AUTOPATH_CONFIRMATIONS}`)
  }
  const score = similarity(cached.request, request)
  if (score < threshold) {
    return Either.left(`plan ${cached.id} is not similar enough (${score.toFixed(2)} < ${threshold})`)
  }
  const was = tokens(cached.request)
  const now = tokens(request)
  if (was.length !== now.length) return Either.left(`plan ${cached.id}: the requests differ in more than words`)
  const swaps = was.flatMap((token, i) => (token === now[i] ? [] : [[token, now[i]!] as const]))
  if (swaps.length === 0) return Either.left(`plan ${cached.id}: the requests do not differ`)
  const args = cached.plan.steps.flatMap((step) => strings(step.args))
  for (const [from] of swaps) {
    if (!args.some((arg) => arg.includes(from))) {
      return Either.left(`plan ${cached.id}: "${from}" is not one of its arguments, so "${request}" is another request`)
    }
  }
  for (const arg of args) {
    const parameterised = swaps.some(([from]) => arg.includes(from))
    const personal = personalValues(arg, cached.request)
    if (personal.length > 0 && !(parameterised && personal.every((p) => swaps.some(([from]) => p.includes(from))))) {
      return Either.left(`plan ${cached.id} embeds ${personal.join(", ")}, which is not a parameter: not generalised`)
    }
  }
  const plan: Plan = {
    steps: cached.plan.steps.map((step) => ({ ...step, args: substitute(step.args, swaps) as Record<string, unknown> }))
  }
  const answer: PlanAnswer = cached.answer.kind === "template"
    ? { kind: "template", text: substitute(cached.answer.text, swaps) as string }
    : cached.answer
  return Either.right({ plan, answer })
}
