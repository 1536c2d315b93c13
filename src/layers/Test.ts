import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { AppConfig } from "../domain/AppConfig.js"
import type { ApprovalRequest, ApprovalVerdict } from "../services/Approvals.js"
import { Workspace } from "../services/Workspace.js"
import { AgentRuntimeLive } from "./AgentRuntimeLive.js"
import { ApprovalsScripted } from "./ApprovalsScripted.js"
import { BudgetMemory } from "./BudgetMemory.js"
import type { ScriptEntry } from "./llm/ScriptedProvider.js"
import { LlmScripted } from "./LlmScripted.js"
import { MyclawConfigFixed } from "./MyclawConfigLive.js"
import { PolicyLive } from "./PolicyLive.js"
import { PromptBuilderLive } from "./PromptBuilderLive.js"
import { ToolRegistryLive } from "./ToolRegistryLive.js"
import { TraceStoreMemory } from "./TraceStoreMemory.js"
import { makeWorkspace } from "./WorkspaceLive.js"

/** A fresh workspace in a temporary folder, removed when the layer's scope closes. */
export const WorkspaceTemp = Layer.scoped(
  Workspace,
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    Effect.flatMap(fs.makeTempDirectoryScoped({ prefix: "myclaw-test-" }), makeWorkspace)).pipe(Effect.orDie)
)

export interface TestOptions {
  readonly script: ReadonlyArray<ScriptEntry>
  readonly config?: Partial<ConstructorParameters<typeof AppConfig>[0]>
  readonly approve?: (request: ApprovalRequest) => boolean | ApprovalVerdict
}

/** The production graph with fakes at the edges: scripted model, scripted approvals, memory traces, temp workspace. */
export const TestLayer = (options: TestOptions) => {
  const base = MyclawConfigFixed(AppConfig.make(options.config ?? {})).pipe(
    Layer.merge(WorkspaceTemp),
    Layer.provideMerge(NodeContext.layer)
  )
  const services = Layer.mergeAll(
    LlmScripted(options.script),
    PolicyLive,
    ApprovalsScripted(options.approve ?? (() => false)),
    BudgetMemory
  ).pipe(
    Layer.provideMerge(PromptBuilderLive),
    Layer.provideMerge(Layer.merge(ToolRegistryLive, TraceStoreMemory))
  )
  return AgentRuntimeLive.pipe(Layer.provideMerge(services), Layer.provideMerge(base))
}
