import { Layer } from "effect"
import type { AuditLog } from "../services/AuditLog.js"
import type { Budget } from "../services/Budget.js"
import type { IdGenerator } from "../services/IdGenerator.js"
import type { Foundation } from "./AppLayer.js"
import * as Compose from "./Compose.js"

// Apart from AppLayer: the budget and audit commands build this alone, and importing AppLayer would load the
// modules of the whole application graph (the runtime, the plan cache, the rules) with them.

/**
 * The audit log and the budget kept beside it (what the budget commands need, without the turn's services). It
 * needs what its parts need: a command that builds it alone provides no more of the platform than they use.
 */
export const makeStateLayer = <
  AAudit,
  EAudit,
  RAudit extends Foundation,
  ABudget,
  EBudget,
  RBudget extends Foundation | AuditLog | IdGenerator,
  AIds,
  EIds
>(parts: {
  readonly ids: Layer.Layer<AIds | IdGenerator, EIds>
  readonly audit: Layer.Layer<AAudit | AuditLog, EAudit, RAudit>
  readonly budget: Layer.Layer<ABudget | Budget, EBudget, RBudget>
}) => parts.budget.pipe(Compose.provideMerge(parts.audit), Compose.provideMerge(parts.ids))
