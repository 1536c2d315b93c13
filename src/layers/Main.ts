import { NodeContext, NodeHttpClient } from "@effect/platform-node"
import { Layer } from "effect"
import { AgentRuntimeLive } from "./AgentRuntimeLive.js"
import { ApprovalsCli } from "./ApprovalsCli.js"
import { BudgetMemory } from "./BudgetMemory.js"
import { LlmLive } from "./LlmLive.js"
import { MyclawConfigLive } from "./MyclawConfigLive.js"
import { PolicyLive } from "./PolicyLive.js"
import { PromptBuilderLive } from "./PromptBuilderLive.js"
import { ToolRegistryLive } from "./ToolRegistryLive.js"
import { TraceStoreFile } from "./TraceStoreFile.js"
import { WorkspaceLive } from "./WorkspaceLive.js"

/** Workspace and configuration: what every command needs first. */
export const BaseLayer = MyclawConfigLive.pipe(
  Layer.provideMerge(WorkspaceLive),
  Layer.provideMerge(Layer.merge(NodeContext.layer, NodeHttpClient.layerUndici))
)

/** The services of a turn, from the configuration. */
export const ServicesLayer = Layer.mergeAll(LlmLive, PolicyLive, ApprovalsCli).pipe(
  Layer.provideMerge(PromptBuilderLive),
  Layer.provideMerge(Layer.mergeAll(ToolRegistryLive, TraceStoreFile, BudgetMemory))
)

/** The whole graph from configuration (DESIGN section 1): compose once, at the edge. */
export const MainLayer = AgentRuntimeLive.pipe(
  Layer.provideMerge(ServicesLayer),
  Layer.provideMerge(BaseLayer)
)
