import type { SessionTurn } from "../../domain/Session.js"
import { ruleCommand } from "../rules/Rules.js"

/**
 * The turns a prompt's history holds: those after the session's last `/new`, rule answers left out (they are
 * commands to the runtime, not conversation). A `/new` also drops the summary of what came before it.
 */
export const conversationOf = (turns: ReadonlyArray<SessionTurn>) => {
  let fresh = -1
  turns.forEach((turn, i) => {
    if (ruleCommand(turn.user_message)?.name === "new") fresh = i
  })
  return {
    turns: turns.slice(fresh + 1).filter((turn) => ruleCommand(turn.user_message) === undefined),
    restarted: fresh >= 0
  }
}
