import { NodeContext, NodeHttpClient } from "@effect/platform-node"
import { Layer } from "effect"
import { AgentRuntimeLive } from "./AgentRuntimeLive.js"
import { ApprovalChannelCli } from "./approvals/ApprovalChannelCli.js"
import { ApprovalsSqlite } from "./approvals/ApprovalsLive.js"
import { AuditLogFile } from "./audit/AuditLogFile.js"
import { BudgetLive } from "./budget/BudgetLive.js"
import { LlmLive } from "./llm/LlmLive.js"
import { MetricsLive } from "./MetricsLive.js"
import { MyclawConfigLive } from "./MyclawConfigLive.js"
import { PolicyLive } from "./PolicyLive.js"
import { PromptBuilderLive } from "./PromptBuilderLive.js"
import { ToolRegistryLive } from "./tools/ToolRegistryLive.js"
import { TraceStoreFile } from "./traces/TraceStoreFile.js"
import { WorkspaceLive } from "./workspace/WorkspaceLive.js"

/** Workspace and configuration: what every command needs first. */
export const BaseLayer = MyclawConfigLive.pipe(
  Layer.provideMerge(WorkspaceLive),
  Layer.provideMerge(Layer.merge(NodeContext.layer, NodeHttpClient.layerUndici))
)

/** The signed audit log and the budget kept beside it. */
export const StateLayer = BudgetLive.pipe(Layer.provideMerge(AuditLogFile))

/** The services of a turn, from the configuration; approvals asked on the terminal. */
export const ServicesLayer = Layer.mergeAll(
  LlmLive,
  PolicyLive,
  ApprovalsSqlite.pipe(Layer.provide(ApprovalChannelCli))
)
  .pipe(
    Layer.provideMerge(PromptBuilderLive),
    Layer.provideMerge(Layer.merge(ToolRegistryLive, TraceStoreFile)),
    Layer.provideMerge(StateLayer)
  )

/** The whole graph from configuration (DESIGN section 1): compose once, at the edge. */
export const MainLayer = AgentRuntimeLive.pipe(
  Layer.provideMerge(MetricsLive),
  Layer.provideMerge(ServicesLayer),
  Layer.provideMerge(BaseLayer)
)
