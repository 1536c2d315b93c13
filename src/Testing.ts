/**
 * Fakes for tests of programs that embed myclaw (`myclaw/testing`): the production graph with a scripted model,
 * a scripted owner and memory stores, and each fake on its own.
 */
export * as ScriptEntry from "./domain/ScriptEntry.js"
export {
  ApprovalAskerScripted,
  ApprovalChannelAlways,
  ApprovalChannelScripted,
  ownerAnswer,
  PresentedApprovals
} from "./layers/approvals/ApprovalChannelScripted.js"
export { ApprovalsScripted, type ScriptedOwner } from "./layers/approvals/ApprovalsScripted.js"
export { AuditLogMemory, makeAuditLogMemory } from "./layers/audit/AuditLogMemory.js"
export { BudgetMemory } from "./layers/budget/BudgetMemory.js"
export { IdGeneratorSequential } from "./layers/ids/IdGeneratorSequential.js"
export { LlmFunction, LlmScripted } from "./layers/llm/LlmScripted.js"
export { makeScriptedProvider } from "./layers/llm/ScriptedProvider.js"
export { makeSecretsMemory, ResolvedSecrets, SecretsMemory } from "./layers/secrets/SecretsMemory.js"
export { TestLayer, type TestOptions, WorkspaceTemp } from "./layers/Test.js"
export { RecordedTraces, TraceStoreMemory } from "./layers/traces/TraceStoreMemory.js"
