/**
 * The embedding API: the runtime, its services, the layers and the domain schemas, for programs (and the
 * benchmark) that run turns in-process without the CLI.
 */
export * as AppConfig from "./domain/AppConfig.js"
export * as AuditRecord from "./domain/AuditRecord.js"
export * as Errors from "./domain/Errors.js"
export * as ExecutionTrace from "./domain/ExecutionTrace.js"
export * as LlmTypes from "./domain/LlmTypes.js"
export * as Tool from "./domain/Tool.js"
export * as ToolCall from "./domain/ToolCall.js"

export { AgentRuntime } from "./services/AgentRuntime.js"
export { ApprovalChannel, Approvals } from "./services/Approvals.js"
export { AuditLog } from "./services/AuditLog.js"
export { Budget } from "./services/Budget.js"
export { Llm } from "./services/Llm.js"
export { Metrics } from "./services/Metrics.js"
export { MyclawConfig } from "./services/MyclawConfig.js"
export { Policy } from "./services/Policy.js"
export { PromptBuilder } from "./services/PromptBuilder.js"
export { ToolRegistry } from "./services/ToolRegistry.js"
export { TraceStore } from "./services/TraceStore.js"
export { Workspace } from "./services/Workspace.js"

export { runTurn } from "./programs/Turn.js"

export { AgentRuntimeLive } from "./layers/AgentRuntimeLive.js"
export { ApprovalChannelCli } from "./layers/ApprovalChannelCli.js"
export { ApprovalChannelScripted, ownerAnswer } from "./layers/ApprovalChannelScripted.js"
export { ApprovalsLive, ApprovalsSqlite } from "./layers/ApprovalsLive.js"
export { ApprovalsScripted } from "./layers/ApprovalsScripted.js"
export { AuditLogFile, makeAuditLogFile } from "./layers/AuditLogFile.js"
export { AuditLogMemory, makeAuditLogMemory } from "./layers/AuditLogMemory.js"
export { BudgetLive } from "./layers/BudgetLive.js"
export { BudgetMemory } from "./layers/BudgetMemory.js"
export { makeScriptedProvider, toolCallFromWire } from "./layers/llm/ScriptedProvider.js"
export { LlmLive } from "./layers/LlmLive.js"
export { LlmFunction, LlmScripted } from "./layers/LlmScripted.js"
export { makeLlmTiers, tierSettings } from "./layers/LlmTiers.js"
export { BaseLayer, MainLayer, ServicesLayer, StateLayer } from "./layers/Main.js"
export { MetricsLive } from "./layers/MetricsLive.js"
export { MyclawConfigFixed, MyclawConfigLive } from "./layers/MyclawConfigLive.js"
export { makePolicy, PolicyLive } from "./layers/PolicyLive.js"
export { PromptBuilderLive } from "./layers/PromptBuilderLive.js"
export { TestLayer, WorkspaceTemp } from "./layers/Test.js"
export {
  builtinTools,
  makeToolRegistry,
  ToolRegistryFrom,
  ToolRegistryLive,
  ToolRegistryWith
} from "./layers/ToolRegistryLive.js"
export { makeTraceStoreFile, TraceStoreFile } from "./layers/TraceStoreFile.js"
export { RecordedTraces, TraceStoreMemory } from "./layers/TraceStoreMemory.js"
export { makeWorkspace, WorkspaceLive } from "./layers/WorkspaceLive.js"
