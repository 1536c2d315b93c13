import { Effect } from "effect"
import type { TurnInput } from "../../services/AgentRuntime.js"
import { Budget } from "../../services/Budget.js"
import { RunningTurns } from "../../services/RunningTurns.js"
import { ToolRegistry } from "../../services/ToolRegistry.js"
import { version } from "../../Version.js"
import { RuleDecision } from "./RuleDecision.js"
import { undo } from "./Undo.js"

/** The rule a turn's message names: `/name` (or `/name@bot`, as Telegram sends it), with what follows. */
export const ruleCommand = (text: string): { readonly name: string; readonly args: string } | undefined => {
  const match = /^\/([a-z_]+)(?:@\w+)?(?:\s+([\s\S]*))?$/i.exec(text.trim())
  if (match === null) return undefined
  const name = match[1]!.toLowerCase()
  return RULES.includes(name) ? { name, args: (match[2] ?? "").trim() } : undefined
}

/** The commands answered by a rule, the same on every channel. */
export const RULES: ReadonlyArray<string> = ["stop", "new", "budget", "status", "undo", "resume"]

/**
 * The rules answered at once, even while a turn of the session runs: they read or stop what runs. The others
 * (`/new`, `/undo`, `/resume`) change or read the conversation, so they take their place in it.
 */
export const IMMEDIATE_RULES: ReadonlySet<string> = new Set(["stop", "budget", "status"])

const answer = (rule: string, response: string, metadata?: Readonly<Record<string, unknown>>) =>
  RuleDecision.Answer({ rule, outcome: "success", response, ...(metadata === undefined ? {} : { metadata }) })

const budgetLine = Effect.map(Budget, (budget) => budget.status).pipe(
  Effect.flatten,
  Effect.map((status) =>
    `Today (${status.day}): spent ${status.spentEur.toFixed(4)} EUR, ${status.reservedEur.toFixed(4)} EUR in ` +
    `flight; soft cap ${status.softCapEur.toFixed(2)} EUR, hard cap ${status.hardCapEur.toFixed(2)} EUR; state ` +
    `${status.level}${status.overrideUntil === null ? "" : " (hard cap lifted by an override)"}.`
  )
)

/** The rule's decision for a message that names one; the turn applies it. */
export const decide = Effect.fnUntraced(function*(name: string, input: TurnInput, traceId: string) {
  switch (name) {
    case "budget":
      return answer(name, yield* budgetLine)
    case "status": {
      // The turn asking is among those counted: the owner wants to know what else runs.
      const running = Math.max(0, (yield* (yield* RunningTurns).count) - 1)
      const tools = (yield* ToolRegistry).tools.length
      return answer(
        name,
        [`myclaw ${version} is up.`, `running turns: ${running}`, `tools: ${tools}`, yield* budgetLine].join("\n")
      )
    }
    case "stop": {
      const stopped = yield* (yield* RunningTurns).stop(input.sessionId)
      return answer(name, stopped === 0 ? "Nothing is running in this session." : `Stopped ${stopped} turn(s).`)
    }
    case "new":
      return answer(
        name,
        "New conversation started: the earlier turns of this session are no longer part of the prompt.",
        { rule: "new" }
      )
    case "resume":
      return answer(
        name,
        "There is no paused dialogue to resume: a turn that waits for the owner waits inside that turn, " +
          "and its question is answered where it was asked.",
        undefined
      )
    default:
      return yield* undo(input, traceId)
  }
})
