import { Console, Effect } from "effect"
import { forTerminal } from "../domain/Text.js"

/**
 * Prints text meant for a person on stdout: on a terminal its control characters are shown as escapes (it holds
 * what models, pages and files wrote); to a pipe or a file it goes exactly as it is.
 */
export const printForPeople = (text: string): Effect.Effect<void> =>
  Effect.suspend(() => Console.log(process.stdout.isTTY === true ? forTerminal(text) : text))
