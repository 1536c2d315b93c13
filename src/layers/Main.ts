import { makeAppLayer } from "./AppLayer.js"
import { ApprovalRouterLive } from "./approvals/ApprovalRouterLive.js"
import { ApprovalsSqlite } from "./approvals/ApprovalsLive.js"
import { AuditLogFile } from "./audit/AuditLogFile.js"
import { FilesBaseLayer, FilesReadOnlyBaseLayer } from "./Base.js"
import { BudgetLive } from "./budget/BudgetLive.js"
import * as Compose from "./Compose.js"
import { IdGeneratorLive } from "./ids/IdGeneratorLive.js"
import { LlmLive } from "./llm/LlmLive.js"
import { PlanCacheNone } from "./plans/PlanCacheSqlite.js"
import { SessionsSqlite } from "./sessions/SessionsSqlite.js"
import { StateLayer, StateReadOnlyLayer } from "./State.js"
import { ToolRegistryConfigured } from "./tools/ToolRegistryConfigured.js"
import { TraceStoreFile } from "./traces/TraceStoreFile.js"

export { StateLayer, StateReadOnlyLayer }

/** Workspace and configuration over Node's files and paths (and an HTTP client loaded on its first request). */
export const BaseLayer = FilesBaseLayer

/** The same for read-only commands: the workspace and its configuration must exist already. */
export const ReadOnlyBaseLayer = FilesReadOnlyBaseLayer

/** The production parts, from the workspace and its configuration. */
export const LiveParts = {
  base: BaseLayer,
  ids: IdGeneratorLive,
  audit: AuditLogFile,
  budget: BudgetLive,
  traceStore: TraceStoreFile,
  sessions: SessionsSqlite,
  tools: ToolRegistryConfigured(),
  llm: LlmLive,
  approvals: ApprovalsSqlite.pipe(Compose.provideMerge(ApprovalRouterLive))
}

/**
 * The graph over an existing workspace, for commands that read it (the digest): a mistyped MYCLAW_HOME is an
 * error, never a new workspace; what they write is only what they must audit (a paid polish of the digest).
 */
export const ExistingWorkspaceLayer = makeAppLayer({
  ...LiveParts,
  base: ReadOnlyBaseLayer,
  plans: PlanCacheNone
})

/** The whole graph from configuration: composed once, at the edge. */
export const MainLayer = makeAppLayer(LiveParts)
