import type { FileSystem, HttpClient, Path } from "@effect/platform"
import { Layer } from "effect"
import type { ApprovalChannel } from "../services/ApprovalChannel.js"
import type { ApprovalRouter } from "../services/ApprovalRouter.js"
import type { Approvals } from "../services/Approvals.js"
import type { AuditLog } from "../services/AuditLog.js"
import type { Budget } from "../services/Budget.js"
import type { IdGenerator } from "../services/IdGenerator.js"
import type { Llm } from "../services/Llm.js"
import type { MyclawConfig } from "../services/MyclawConfig.js"
import type { PlanCache } from "../services/PlanCache.js"
import type { Policy } from "../services/Policy.js"
import type { Secrets } from "../services/Secrets.js"
import type { Sessions } from "../services/Sessions.js"
import type { ToolRegistry } from "../services/ToolRegistry.js"
import type { TraceStore } from "../services/TraceStore.js"
import type { Workspace } from "../services/Workspace.js"
import { AgentRuntimeLive } from "./AgentRuntimeLive.js"
import * as Compose from "./Compose.js"
import { MetricsLive } from "./MetricsLive.js"
import { PlanCacheSqlite } from "./plans/PlanCacheSqlite.js"
import { PolicyLive } from "./PolicyLive.js"
import { PromptBuilderLive } from "./PromptBuilderLive.js"
import { RunningTurnsLive } from "./RunningTurnsLive.js"
import { RedactedLogs } from "./secrets/RedactedLogs.js"
import { SecretsLive } from "./secrets/SecretsLive.js"
import { makeStateLayer } from "./StateLayer.js"
import { TraceSinkLive } from "./TraceSinkLive.js"

/** What every part may use: the configuration, the workspace, files and paths, and an HTTP client. */
export type Foundation =
  | MyclawConfig
  | Workspace
  | FileSystem.FileSystem
  | Path.Path
  | HttpClient.HttpClient

/**
 * The replaceable parts of the application: Main passes the live ones, tests and the benchmark their own. Each
 * part names the service it provides (it may provide more, e.g. a fake's inspection handle) and what it may use.
 */
export interface AppParts<
  ABase,
  EBase,
  AIds,
  EIds,
  AAudit,
  EAudit,
  ABudget,
  EBudget,
  ATraces,
  ETraces,
  ATools,
  ETools,
  ALlm,
  ELlm,
  AApprovals,
  EApprovals,
  ASessions = never,
  ESessions = never
> {
  /** The configuration, the workspace and the platform. */
  readonly base: Layer.Layer<ABase | Foundation, EBase>
  readonly ids: Layer.Layer<AIds | IdGenerator, EIds>
  readonly audit: Layer.Layer<AAudit | AuditLog, EAudit, Foundation>
  readonly budget: Layer.Layer<ABudget | Budget, EBudget, Foundation | AuditLog | IdGenerator>
  readonly traceStore: Layer.Layer<ATraces | TraceStore, ETraces, Foundation>
  /** The sessions and their history (what the prompt's history blocks are built from). */
  readonly sessions: Layer.Layer<ASessions | Sessions, ESessions, Foundation | IdGenerator>
  /** The tools may resolve secrets at execution; the registry redacts every resolved value from their results. */
  readonly tools: Layer.Layer<ATools | ToolRegistry, ETools, Foundation | Secrets>
  /** The owner's secrets (default: the workspace's encrypted store). */
  readonly secrets?: Layer.Layer<Secrets, never, Foundation> | undefined
  readonly llm: Layer.Layer<ALlm | Llm, ELlm, Foundation | Budget>
  /** The approvals service and the router its channels register on. */
  readonly approvals: Layer.Layer<
    AApprovals | Approvals | ApprovalChannel | ApprovalRouter,
    EApprovals,
    Foundation | AuditLog | IdGenerator | Policy
  >
  /** The plan cache (default: the workspace's SQLite file). */
  readonly plans?: Layer.Layer<PlanCache, never, Foundation>
}

export { makeStateLayer }

/**
 * The application graph, built in one place from its parts: state (audit log, budget), the turn's services, the
 * trace sink, metrics and the runtime. What the turn program needs is derived from its type (AgentRuntimeLive).
 */
export const makeAppLayer = <
  ABase,
  EBase,
  AIds,
  EIds,
  AAudit,
  EAudit,
  ABudget,
  EBudget,
  ATraces,
  ETraces,
  ATools,
  ETools,
  ALlm,
  ELlm,
  AApprovals,
  EApprovals,
  ASessions,
  ESessions
>(
  parts: AppParts<
    ABase,
    EBase,
    AIds,
    EIds,
    AAudit,
    EAudit,
    ABudget,
    EBudget,
    ATraces,
    ETraces,
    ATools,
    ETools,
    ALlm,
    ELlm,
    AApprovals,
    EApprovals,
    ASessions,
    ESessions
  >
) => {
  const services = Compose.mergeAll(parts.llm, parts.approvals).pipe(
    Compose.provideMerge(
      Compose.mergeAll(PromptBuilderLive, PolicyLive, RunningTurnsLive, parts.plans ?? PlanCacheSqlite)
    ),
    Compose.provideMerge(Compose.mergeAll(parts.tools, parts.traceStore, parts.sessions)),
    Compose.provideMerge(makeStateLayer(parts)),
    Compose.provideMerge(RedactedLogs),
    Compose.provideMerge(parts.secrets ?? SecretsLive)
  )
  return AgentRuntimeLive.pipe(
    Compose.provideMerge(TraceSinkLive),
    Compose.provideMerge(MetricsLive),
    Compose.provideMerge(services),
    Compose.provideMerge(parts.base)
  )
}
