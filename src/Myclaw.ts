/**
 * The embedding API: run turns in-process with the production graph, or build your own graph from its parts
 * (your tools, your model, your approval channel). Test fakes are in `myclaw/testing`.
 */

// Run turns
export { type AppParts, type Foundation, makeAppLayer, makeStateLayer } from "./layers/AppLayer.js"
export { BaseLayer, LiveParts, MainLayer, StateLayer } from "./layers/Main.js"
export { gate, type GateContext } from "./programs/turn/Gate.js"
export { runTurn, type TurnServices } from "./programs/turn/Turn.js"
export { type TurnInput } from "./services/AgentRuntime.js"
export { AgentRuntime } from "./services/AgentRuntime.js"

// Add tools
export * as Tool from "./domain/Tool.js"
export { ToolRegistryConfigured } from "./layers/tools/ToolRegistryConfigured.js"
export { builtinTools, ToolRegistryFrom, ToolRegistryLive, ToolRegistryWith } from "./layers/tools/ToolRegistryLive.js"

// Add a model
export { LlmLive, LlmProviders } from "./layers/llm/LlmLive.js"
export { makeLlmTiers, type TierProviders, tierSettings } from "./layers/llm/LlmTiers.js"
export type { Provider, ProviderResponse } from "./layers/llm/Provider.js"

// Ask for approvals on your own channel
export { ApprovalRouterLive } from "./layers/approvals/ApprovalRouterLive.js"
export { ApprovalsLive, ApprovalsSqlite } from "./layers/approvals/ApprovalsLive.js"
export { ApprovalChannel } from "./services/ApprovalChannel.js"
export { type ApprovalAsker, ApprovalRouter } from "./services/ApprovalRouter.js"
export { Approvals } from "./services/Approvals.js"

// The other services, and their production layers
export { AuditLogFile, makeAuditLogFile } from "./layers/audit/AuditLogFile.js"
export { BudgetLive } from "./layers/budget/BudgetLive.js"
export { IdGeneratorLive } from "./layers/ids/IdGeneratorLive.js"
export { MyclawConfigFixed, MyclawConfigLive } from "./layers/MyclawConfigLive.js"
export { makeTraceStoreFile, TraceStoreFile } from "./layers/traces/TraceStoreFile.js"
export { makeWorkspace, WorkspaceLive } from "./layers/workspace/WorkspaceLive.js"
export { AuditLog } from "./services/AuditLog.js"
export { Budget } from "./services/Budget.js"
export { IdGenerator } from "./services/IdGenerator.js"
export { Llm } from "./services/Llm.js"
export { McpServers, type McpServerStatus } from "./services/McpServers.js"
export { Metrics } from "./services/Metrics.js"
export { MyclawConfig } from "./services/MyclawConfig.js"
export { Policy } from "./services/Policy.js"
export { PromptBuilder } from "./services/PromptBuilder.js"
export { ToolRegistry } from "./services/ToolRegistry.js"
export { TraceSink } from "./services/TraceSink.js"
export { TraceStore } from "./services/TraceStore.js"
export { Workspace } from "./services/Workspace.js"

// What a turn leaves behind, and its configuration
export * as AppConfig from "./domain/AppConfig.js"
export * as AuditRecord from "./domain/AuditRecord.js"
export * as Errors from "./domain/Errors.js"
export * as ExecutionTrace from "./domain/ExecutionTrace.js"
export * as LlmTypes from "./domain/LlmTypes.js"
export * as ToolCall from "./domain/ToolCall.js"

// Replay and evaluation of recorded turns.
export { compareTraces, type Divergence, renderReport, type ReplayReport } from "./domain/Divergence.js"
export { checkReplayable, exportTrace, parseTraceText, TraceFileError } from "./domain/TraceFile.js"
export { renderListing, renderTimeline } from "./domain/TraceTimeline.js"
export { ReplayBaseTemp } from "./layers/ReplayBase.js"
export { evalFolder, evalTraces, loadTraceFile, renderEval } from "./programs/replay/Eval.js"
export { defaultToolReplay, makeReplayer, type ReplayOptions, replayTrace } from "./programs/replay/Replay.js"
