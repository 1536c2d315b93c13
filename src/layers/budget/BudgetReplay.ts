import { Effect, Layer } from "effect"
import { budgetStatusOf } from "../../domain/BudgetReads.js"
import { Budget } from "../../services/Budget.js"
import { currentReplay } from "../../services/Replaying.js"
import * as Compose from "../Compose.js"
import { BudgetMemory } from "./BudgetMemory.js"

/**
 * The budget of a replay: each status the turn reads is the one it read when it was recorded, in order (the last
 * one again once they are used up; the budget in memory for a recording without them). Nothing is spent.
 */
export const BudgetReplay = Layer.effect(
  Budget,
  Effect.map(Budget, (memory) => {
    const status = Effect.flatMap(currentReplay, (session) => {
      const read = session.budgetReads.length > 1 ? session.budgetReads.shift() : session.budgetReads[0]
      return read === undefined ? memory.status : Effect.succeed(budgetStatusOf(read))
    })
    return Budget.of({
      ...memory,
      status,
      statusWith: (f) => Effect.map(status, f),
      // Every read is a recorded one: none is told from the budget in memory.
      statusAt: undefined,
      softNoticeGiven: Effect.void
    })
  })
).pipe(Compose.provide(BudgetMemory))
