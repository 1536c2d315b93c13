import { Layer } from "effect"
import type { AuditLog } from "../services/AuditLog.js"
import type { Budget } from "../services/Budget.js"
import type { IdGenerator } from "../services/IdGenerator.js"
import type { Foundation } from "./AppLayer.js"

// Apart from AppLayer: the budget and audit commands build this alone, and importing AppLayer would load the
// modules of the whole application graph (the runtime, the plan cache, the rules) with them.

/** The audit log and the budget kept beside it (what the budget commands need, without the turn's services). */
export const makeStateLayer = <AAudit, EAudit, ABudget, EBudget, AIds, EIds>(parts: {
  readonly ids: Layer.Layer<AIds | IdGenerator, EIds>
  readonly audit: Layer.Layer<AAudit | AuditLog, EAudit, Foundation>
  readonly budget: Layer.Layer<ABudget | Budget, EBudget, Foundation | AuditLog | IdGenerator>
}) => parts.budget.pipe(Layer.provideMerge(parts.audit), Layer.provideMerge(parts.ids))
