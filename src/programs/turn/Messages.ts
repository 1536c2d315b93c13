import { type BudgetExceeded, budgetExceededMessage, callTooLarge, type LlmError } from "../../domain/Errors.js"
import type { FinishReason, Outcome } from "../../domain/ExecutionTrace.js"
import { localMinute } from "../../domain/Time.js"
import type { BudgetStatus } from "../../services/Budget.js"
import type { Gate, Run } from "./Gate.js"

/** The pre-written answers of the turn: no LLM is involved in writing them. */

const resetTime = (status: BudgetStatus): string => {
  return `${localMinute(status.resetsAt, status.timeZone)} ${status.timeZone}`
}

export const budgetHitMessage = (status: BudgetStatus): string =>
  `Today's budget is spent (${(status.spentEur + status.reservedEur).toFixed(2)} EUR of the ${
    status.hardCapEur.toFixed(2)
  } EUR hard cap), so I can't call a model until it resets at ${resetTime(status)}. ` +
  "The owner can lift the cap for today with: myclaw budget override --until HH:MM --reason \"...\""

/**
 * A call the budget refused: the day's budget is spent, or (when it is not) this one call's maximum is more than
 * what remains, which a smaller answer limit, a higher cap or an override fixes.
 */
export const budgetRefusedMessage = (error: BudgetExceeded, status: BudgetStatus): string =>
  callTooLarge(error)
    ? `I did not call the model: ${budgetExceededMessage(error)}. ` +
      "To make such a call fit, lower the model's maxTokens in myclaw.json, shorten the conversation, raise " +
      "budget.hardCapEur, or lift the cap for today with: myclaw budget override --until HH:MM --reason \"...\""
    : budgetHitMessage(status)

export const softCapNotice = (status: BudgetStatus): string =>
  `(Note: today's spending passed the ${status.softCapEur.toFixed(2)} EUR soft cap; until ${
    resetTime(status)
  } answers come from the cheaper local-fast model.)`

/**
 * A model call that failed ends the turn. The owner is told what it had already run (`ran`, the tools executed
 * in order), never that nothing was done when something was, and, for a conversation longer than the model
 * takes, how to go on.
 */
export const llmFailureMessage = (error: LlmError, ran: ReadonlyArray<string> = [], traceId = ""): string => {
  const failed = `I could not get an answer from the language model (${error.reason}: ${error.message}).`
  const done = ran.length === 0
    ? " Nothing else was done."
    : ` Before that, this turn ran ${
      ran.length === 1 ? ran[0] : `${ran.slice(0, -1).join(", ")} and ${ran.at(-1)}`
    }: \`myclaw trace show ${traceId}\` shows what each did.`
  const next = error.reason === "ContextTooLong"
    ? " The conversation is longer than this model takes: /new starts a fresh one (a long file or page read in " +
      "this turn counts too: ask for a part of it)."
    : ""
  return failed + done + next
}

/**
 * The answer as the owner is told it. An answer cut at the model's output limit says so (a reasoning model may spend
 * the whole limit thinking and write nothing), and an empty one says there is none, rather than showing nothing.
 */
export const answerText = (text: string, finishReason: FinishReason): string => {
  const empty = text.trim() === ""
  if (finishReason === "length") {
    return empty
      ? "The model reached its output limit before writing an answer (it may have spent it reasoning). Raise its " +
        "maxTokens in myclaw.json, or ask for something shorter."
      : `${text}\n\n(This answer was cut at the model's output limit: its maxTokens in myclaw.json.)`
  }
  if (finishReason === "content_filter") {
    return empty
      ? "This answer was stopped by the model's provider (its safety filter, or the model declined) before any " +
        "text. Rephrase, or ask something else."
      : `${text}\n\n(This answer was stopped by the model's provider, its safety filter, before it ended.)`
  }
  return empty ? "The model gave no answer (an empty reply). Ask again, or rephrase." : text
}

/** Told to the model with a call whose arguments its output limit cut off. */
export const cutArgumentsHint = "Your answer was cut at your output limit, so this call may be incomplete: make it " +
  "shorter (write a long file in parts, the later ones with append: true)."

export const stepsExhaustedMessage = (maxSteps: number): string =>
  `I stopped after ${maxSteps} steps without reaching an answer.`

/** The metadata key of a turn refused because its audit record could not be written. */
export const UNRECORDED = "unrecorded"

export const unrecordedMessage = (reason: string): string =>
  `Not done: the audit log cannot be written (${reason}), and myclaw does not act without a record. ` +
  "Nothing was sent to a model; `myclaw doctor` and /health say what to fix."

export const invalidStreakMessage = "I stopped: the model made two invalid tool calls in a row."

/** How a call that did not run ends the turn (an invalid call does not, unless it is the second in a row). */
export const gateEnd = (gate: Exclude<Gate, Run>): { readonly outcome: Outcome; readonly response: string } | null => {
  switch (gate._tag) {
    case "Invalid":
      return null
    case "Denied": {
      const { decision, prepared, tool } = gate
      return {
        outcome: "policy_denied",
        response: gate.approval === null
          ? `I did not run ${tool.name} on ${
            prepared.target || "its target"
          }: denied by the policy rule "${decision.rule}" (${decision.reason}).`
          : `I did not run ${tool.name} on ${prepared.target}: it was approved, but the policy rule "${decision.rule}" now denies it (${decision.reason}).`
      }
    }
    case "NotApproved":
      return {
        outcome: "user_aborted",
        response:
          `I did not run ${gate.tool.name}: ${gate.prepared.summary} was not approved (${gate.approval.reason}).`
      }
    case "ArgsChanged":
      return {
        outcome: "user_aborted",
        response: `I did not run ${gate.tool.name}: its arguments are not the ones that were approved.`
      }
    case "AuditFailed":
      return {
        outcome: "policy_denied",
        response:
          `I did not run ${gate.tool.name}: the audit log could not record the decision first (${gate.error.message}), so nothing was changed.`
      }
  }
}
