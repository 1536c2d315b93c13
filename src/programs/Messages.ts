import type { LlmError } from "../domain/Errors.js"
import type { BudgetStatus } from "../services/Budget.js"

/** The pre-written answers of the turn: no LLM is involved in writing them. */

export const budgetHitMessage = (status: BudgetStatus): string =>
  `The daily budget is spent (${status.spentEur.toFixed(2)} EUR of a ${status.hardCapEur.toFixed(2)} EUR hard cap). ` +
  "No model can be called until the budget resets at local midnight."

export const llmFailureMessage = (error: LlmError): string =>
  `I could not get an answer from the language model (${error.reason}: ${error.message}). Nothing else was done.`

export const stepsExhaustedMessage = (maxSteps: number): string =>
  `I stopped after ${maxSteps} steps without reaching an answer.`
