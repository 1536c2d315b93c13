import { Effect, Layer } from "effect"
import { FilesReadOnlyBaseLayer } from "./Base.js"
import { makeBudgetReadOnly } from "./budget/BudgetLive.js"
import * as Compose from "./Compose.js"
import { IdGeneratorLive } from "./ids/IdGeneratorLive.js"

/**
 * The signed audit log, its module loaded when it is first needed: a command that reads the budget database needs
 * none of it, and loading and opening it is a good part of such a command's start-up.
 */
const AuditLogOnDemand = Layer.unwrapEffect(
  Effect.map(Effect.promise(() => import("./audit/AuditLogFile.js")), (module) => module.AuditLogFile)
)

/**
 * `myclaw budget`: the budget, read-only, over an existing workspace; the audit log is loaded and opened only when
 * there is no budget database yet, to compute today's counters from it.
 */
export const BudgetShowLayer = makeBudgetReadOnly(AuditLogOnDemand).pipe(
  Compose.provideMerge(IdGeneratorLive),
  Compose.provideMerge(FilesReadOnlyBaseLayer)
)
