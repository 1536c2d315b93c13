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
export { ApprovalChannelCli } from "./layers/approvals/ApprovalChannelCli.js"
export { ApprovalChannelScripted, ownerAnswer } from "./layers/approvals/ApprovalChannelScripted.js"
export { ApprovalsLive, ApprovalsSqlite } from "./layers/approvals/ApprovalsLive.js"
export { ApprovalsScripted } from "./layers/approvals/ApprovalsScripted.js"
export { AuditLogFile, makeAuditLogFile } from "./layers/audit/AuditLogFile.js"
export { AuditLogMemory, makeAuditLogMemory } from "./layers/audit/AuditLogMemory.js"
export { BudgetLive } from "./layers/budget/BudgetLive.js"
export { BudgetMemory } from "./layers/budget/BudgetMemory.js"
export { LlmLive } from "./layers/llm/LlmLive.js"
export { LlmFunction, LlmScripted } from "./layers/llm/LlmScripted.js"
export { makeLlmTiers, tierSettings } from "./layers/llm/LlmTiers.js"
export { makeScriptedProvider } from "./layers/llm/ScriptedProvider.js"
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
} from "./layers/tools/ToolRegistryLive.js"
export { makeTraceStoreFile, TraceStoreFile } from "./layers/traces/TraceStoreFile.js"
export { RecordedTraces, TraceStoreMemory } from "./layers/traces/TraceStoreMemory.js"
export { makeWorkspace, WorkspaceLive } from "./layers/workspace/WorkspaceLive.js"
