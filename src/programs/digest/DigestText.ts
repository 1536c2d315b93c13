import type { SealedRecord } from "../../domain/AuditRecord.js"
import { type Outcome, outcomes } from "../../domain/ExecutionTrace.js"
import { isCalendarDay } from "../../domain/Time.js"

/** The facts of one local day, computed from its audit records; the text is rendered from these alone. */
export interface DigestFacts {
  readonly day: string
  readonly outcomes: Readonly<Record<Outcome, number>>
  readonly requests: number
  /** Tools called more than 3 times, most used first. */
  readonly tools: ReadonlyArray<readonly [name: string, count: number]>
  readonly approvals: {
    readonly explicit: number
    readonly batch: number
    readonly batchClasses: ReadonlyArray<string>
    readonly denied: number
    readonly deniedClasses: ReadonlyArray<string>
  }
  readonly costEur: number
  readonly softCapEur: number
  readonly p95Ms: number | null
  /** Local `HH:MM` and one sentence, in time order. */
  readonly notable: ReadonlyArray<string>
  readonly edits: number
  readonly state: "regular" | "attention" | "alert"
}

/** `today`, or a real calendar day as `YYYY-MM-DD`. */
export const isDigestDay = (text: string): boolean => text === "today" || isCalendarDay(text)

const of = <K extends SealedRecord["kind"]>(records: ReadonlyArray<SealedRecord>, kind: K) =>
  records.filter((record): record is Extract<SealedRecord, { readonly kind: K }> => record.kind === kind)

/** Nearest-rank percentile. */
const percentile = (values: ReadonlyArray<number>, p: number): number | null => {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!
}

const count = (keys: ReadonlyArray<string>): Map<string, number> =>
  keys.reduce((counts, key) => counts.set(key, (counts.get(key) ?? 0) + 1), new Map<string, number>())

const distinct = (values: ReadonlyArray<string>) => [...new Set(values)].sort()

type Event = readonly [at: string, text: string]

/** What the owner should hear about: injections, denials, overrides, edits of the constitution and workspace. */
const notableEvents = (records: ReadonlyArray<SealedRecord>, clock: Intl.DateTimeFormat): ReadonlyArray<Event> => [
  ...of(records, "injection_suspected").map((r): Event => [
    r.at,
    `suspected prompt injection from ${r.source} (pattern "${r.pattern}"): not executed`
  ]),
  ...of(records, "tool_decision").filter((r) => r.decision === "deny").map((r): Event => [
    r.at,
    `the policy denied ${r.tool_name} on ${r.target} (${r.rule})`
  ]),
  ...of(records, "approval").filter((r) => r.event === "verdict" && r.granted === false).map((r): Event => [
    r.at,
    `approval ${r.via === "timeout" ? "timed out" : "denied"} for ${r.effect_class}`
  ]),
  ...of(records, "budget_override").map((r): Event => [
    r.at,
    `budget override by ${r.sender} until ${clock.format(Date.parse(r.until))}: ${r.reason}`
  ]),
  ...of(records, "constitution_modified").map((r): Event => [
    r.at,
    `constitution (SOUL.md) modified${r.notes === undefined ? "" : `: ${r.notes}`}`
  ]),
  ...of(records, "workspace_edit").map((r): Event => [r.at, `${r.file} edited by ${r.author} (${r.diff_stat})`])
]

/** Everything the digest says, computed deterministically from the day's records. */
export const digestFacts = (
  day: string,
  records: ReadonlyArray<SealedRecord>,
  settings: { readonly timeZone: string; readonly usdToEur: number; readonly softCapEur: number }
): DigestFacts => {
  const traces = of(records, "trace")
  const approvals = of(records, "approval")
  const byOutcome = count(traces.map((trace) => trace.outcome))
  const used = traces.flatMap((trace) => trace.tool_calls.filter((call) => call.outcome !== "unknown_tool"))
  const toolCounts = count(used.map((call) => call.name))
  const verdicts = approvals.filter((record) => record.event === "verdict")
  const batchUses = approvals.filter((record) => record.event === "batch_use" && record.granted !== false)
  const deniedVerdicts = verdicts.filter((record) => record.granted === false)
  const clock = new Intl.DateTimeFormat("en-GB", {
    timeZone: settings.timeZone,
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23"
  })
  // What the day cost: its turns, and the paid calls made outside a turn (the digest's own polish).
  const costEur = [...traces, ...of(records, "llm_call")].reduce((total, record) => total + record.cost_usd, 0) *
    settings.usdToEur
  const failures = (byOutcome.get("tool_hallucination") ?? 0) + (byOutcome.get("timeout_steps") ?? 0)
  // One word: alert for a changed constitution or the hard cap; attention for money or many failures.
  const state = of(records, "constitution_modified").length > 0 || byOutcome.has("budget_hit")
    ? "alert"
    : of(records, "budget_override").length > 0 || costEur >= settings.softCapEur || failures * 4 > traces.length
    ? "attention"
    : "regular"
  return {
    day,
    outcomes: Object.fromEntries(outcomes.map((o) => [o, byOutcome.get(o) ?? 0])) as Record<Outcome, number>,
    requests: traces.length,
    tools: [...toolCounts].filter(([, n]) => n > 3).sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1)),
    approvals: {
      explicit: verdicts.filter((record) => record.granted === true).length,
      batch: batchUses.length,
      batchClasses: distinct(batchUses.map((record) => record.effect_class)),
      denied: deniedVerdicts.length,
      deniedClasses: distinct(deniedVerdicts.map((record) => record.effect_class))
    },
    costEur,
    softCapEur: settings.softCapEur,
    p95Ms: percentile(traces.map((trace) => trace.wall_time_ms), 0.95),
    notable: notableEvents(records, clock)
      .map(([at, text]) => [Date.parse(at), text] as const)
      .sort(([a], [b]) => a - b)
      .map(([at, text]) => `${clock.format(at)} ${text}`),
    edits: of(records, "constitution_modified").length + of(records, "workspace_edit").length,
    state
  }
}

const outcomeWords: ReadonlyArray<readonly [Outcome, string]> = [
  ["success", "completed successfully"],
  ["user_aborted", "aborted (an approval denied or timed out, or stopped)"],
  ["policy_denied", "denied by the policy"],
  ["tool_hallucination", "failed (tool hallucination: the model invented a tool or its arguments)"],
  ["budget_hit", "stopped at the daily hard cap"],
  ["timeout_steps", "ran out of steps or failed"]
]
const stateMark = { regular: "🟢", attention: "🟡", alert: "🔴" } as const

/** The digest as text (in English). */
export const renderDigest = (facts: DigestFacts): string => {
  const lines = [`myclaw · digest · ${facts.day}`, "", `📨 Requests handled: ${facts.requests}`]
  const outcomeLines = outcomeWords.filter(([outcome]) => facts.outcomes[outcome] > 0)
  outcomeLines.forEach(([outcome, words], i) =>
    lines.push(`  ${i === outcomeLines.length - 1 ? "└─" : "├─"} ${facts.outcomes[outcome]} ${words}`)
  )
  lines.push("")
  if (facts.tools.length === 0) lines.push("🔧 No tool used more than 3 times.")
  else lines.push("🔧 Tools used more than 3 times:", ...facts.tools.map(([name, n]) => `  - ${name} (${n})`))
  lines.push("")
  const { approvals } = facts
  if (approvals.explicit + approvals.batch + approvals.denied === 0) lines.push("✅ No approvals.")
  else {
    const classes = (list: ReadonlyArray<string>) => (list.length === 0 ? "" : ` (${list.join(", ")})`)
    lines.push(
      "✅ Approvals:",
      `  - ${approvals.explicit} granted explicitly`,
      `  - ${approvals.batch} granted by a standing grant${classes(approvals.batchClasses)}`,
      `  - ${approvals.denied} denied or timed out${classes(approvals.deniedClasses)}`
    )
  }
  lines.push(
    "",
    `💰 Cost: ${facts.costEur.toFixed(2)} € (soft cap ${facts.softCapEur.toFixed(2)} €)`,
    facts.p95Ms === null ? "⏱ Latency p95: no requests" : `⏱ Latency p95: ${(facts.p95Ms / 1000).toFixed(1)} s`,
    ""
  )
  if (facts.notable.length === 0) lines.push("⚠ Nothing notable.")
  else lines.push("⚠ Notable:", ...facts.notable.map((text) => `  - ${text}`))
  lines.push("")
  if (facts.edits === 0) lines.push("No constitution or workspace edits.")
  lines.push(`${stateMark[facts.state]} state: ${facts.state}`)
  return lines.join("\n")
}

const numbers = (text: string): Array<string> => text.match(/\d+(?:\.\d+)?/g) ?? []

/** Every number of `original` is still in `polished` (as often), and `polished` has no number of its own. */
export const keepsNumbers = (original: string, polished: string): boolean => {
  const left = count(numbers(original))
  const right = count(numbers(polished))
  return [...left].every(([n, k]) => (right.get(n) ?? 0) >= k) && [...right.keys()].every((n) => left.has(n))
}
