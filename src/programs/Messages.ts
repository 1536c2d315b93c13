import type { LlmError } from "../domain/Errors.js"
import type { BudgetStatus } from "../services/Budget.js"

/** The pre-written answers of the turn: no LLM is involved in writing them. */

const resetTime = (status: BudgetStatus): string => {
  const local = new Date(status.resetsAt).toLocaleString("sv-SE", { timeZone: status.timeZone }).slice(0, 16)
  return `${local} ${status.timeZone}`
}

export const budgetHitMessage = (status: BudgetStatus): string =>
  `Today's budget is spent (${(status.spentEur + status.reservedEur).toFixed(2)} EUR of the ${
    status.hardCapEur.toFixed(2)
  } EUR hard cap), so I can't call a model until it resets at ${resetTime(status)}. ` +
  "The owner can lift the cap for today with: myclaw budget override --until HH:MM --reason \"...\""

export const softCapNotice = (status: BudgetStatus): string =>
  `(Note: today's spending passed the ${status.softCapEur.toFixed(2)} EUR soft cap; until ${
    resetTime(status)
  } answers come from the cheaper local-fast model.)`

export const llmFailureMessage = (error: LlmError): string =>
  `I could not get an answer from the language model (${error.reason}: ${error.message}). Nothing else was done.`

export const stepsExhaustedMessage = (maxSteps: number): string =>
  `I stopped after ${maxSteps} steps without reaching an answer.`
