import { NodeContext, NodeHttpClient } from "@effect/platform-node"
import { Layer } from "effect"
import { makeAppLayer, makeStateLayer } from "./AppLayer.js"
import { ApprovalRouterLive } from "./approvals/ApprovalRouterLive.js"
import { ApprovalsSqlite } from "./approvals/ApprovalsLive.js"
import { AuditLogFile } from "./audit/AuditLogFile.js"
import { BudgetLive, BudgetReadOnly } from "./budget/BudgetLive.js"
import { IdGeneratorLive } from "./ids/IdGeneratorLive.js"
import { LlmLive } from "./llm/LlmLive.js"
import { MyclawConfigLive, MyclawConfigReadOnly } from "./MyclawConfigLive.js"
import { SecretStoreFile } from "./secrets/SecretStoreFile.js"
import { SessionsSqlite } from "./sessions/SessionsSqlite.js"
import { ToolRegistryConfigured } from "./tools/ToolRegistryConfigured.js"
import { TraceStoreFile } from "./traces/TraceStoreFile.js"
import { WorkspaceExisting, WorkspaceLive } from "./workspace/WorkspaceLive.js"

/** Workspace and configuration: what every command needs first. */
export const BaseLayer = MyclawConfigLive.pipe(
  Layer.provideMerge(WorkspaceLive),
  Layer.provideMerge(Layer.merge(NodeContext.layer, NodeHttpClient.layerUndici))
)

/** Workspace and configuration for read-only commands: both must exist already, nothing is written. */
export const ReadOnlyBaseLayer = MyclawConfigReadOnly.pipe(
  Layer.provideMerge(WorkspaceExisting),
  Layer.provideMerge(Layer.merge(NodeContext.layer, NodeHttpClient.layerUndici))
)

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
  approvals: ApprovalsSqlite.pipe(Layer.provideMerge(ApprovalRouterLive))
}

/** The signed audit log and the budget kept beside it. */
export const StateLayer = makeStateLayer(LiveParts)

/** The sessions and the audit log that records their deletion, for the sessions commands. */
export const SessionsCommandLayer = SessionsSqlite.pipe(
  Layer.provideMerge(Layer.merge(AuditLogFile, IdGeneratorLive)),
  Layer.provideMerge(BaseLayer)
)

/** The audit log and the budget as read-only commands see it: the budget store is neither created nor written. */
export const StateReadOnlyLayer = makeStateLayer({ ...LiveParts, budget: BudgetReadOnly })

/**
 * The graph over an existing workspace, for commands that read it (the digest): a mistyped MYCLAW_HOME is an
 * error, never a new workspace; what they write is only what they must audit (a paid polish of the digest).
 */
export const ExistingWorkspaceLayer = makeAppLayer({ ...LiveParts, base: ReadOnlyBaseLayer })

/** The whole graph from configuration: composed once, at the edge. */
export const MainLayer = makeAppLayer(LiveParts)

/** The secret store and the audit log that records its changes (`myclaw secrets set|rm`). */
export const SecretsAdminLayer = Layer.merge(SecretStoreFile, AuditLogFile).pipe(Layer.provideMerge(BaseLayer))

/** The secret store of an existing workspace, read only (`myclaw secrets list`). */
export const SecretsReadLayer = SecretStoreFile.pipe(Layer.provideMerge(ReadOnlyBaseLayer))
