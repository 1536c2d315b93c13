import { AuditLogFile } from "./audit/AuditLogFile.js"
import { BudgetLive, BudgetReadOnly } from "./budget/BudgetLive.js"
import { IdGeneratorLive } from "./ids/IdGeneratorLive.js"
import { makeStateLayer } from "./StateLayer.js"

/** The signed audit log and the budget kept beside it. */
export const StateLayer = makeStateLayer({ ids: IdGeneratorLive, audit: AuditLogFile, budget: BudgetLive })

/** The audit log and the budget as read-only commands see it: the budget store is neither created nor written. */
export const StateReadOnlyLayer = makeStateLayer({ ids: IdGeneratorLive, audit: AuditLogFile, budget: BudgetReadOnly })
