import { FileSystem } from "@effect/platform"
import type { HttpClient } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer, Option, Schema } from "effect"
import * as NodePath from "node:path"
import { AppConfig } from "../domain/AppConfig.js"
import type { ScriptEntry } from "../domain/ScriptEntry.js"
import type { Tool } from "../domain/Tool.js"
import type { ApprovalChannel } from "../services/ApprovalChannel.js"
import type { ApprovalRequest, Approvals } from "../services/Approvals.js"
import type { AuditLog } from "../services/AuditLog.js"
import type { Budget } from "../services/Budget.js"
import type { IdGenerator } from "../services/IdGenerator.js"
import type { Llm } from "../services/Llm.js"
import type { MyclawConfig } from "../services/MyclawConfig.js"
import type { Policy } from "../services/Policy.js"
import type { Secrets } from "../services/Secrets.js"
import type { Sessions } from "../services/Sessions.js"
import { Workspace } from "../services/Workspace.js"
import { type Foundation, makeAppLayer } from "./AppLayer.js"
import { ApprovalAskerScripted, ownerAnswer } from "./approvals/ApprovalChannelScripted.js"
import { ApprovalRouterLive } from "./approvals/ApprovalRouterLive.js"
import { ApprovalsSqlite } from "./approvals/ApprovalsLive.js"
import { AuditLogMemory } from "./audit/AuditLogMemory.js"
import { FilesAndPaths } from "./Base.js"
import { BudgetLive } from "./budget/BudgetLive.js"
import * as Compose from "./Compose.js"
import { IdGeneratorLive } from "./ids/IdGeneratorLive.js"
import { LlmScripted } from "./llm/LlmScripted.js"
import { MyclawConfigFixed } from "./MyclawConfigLive.js"
import { SessionsMemory } from "./sessions/SessionsMemory.js"
import { SessionsSqlite } from "./sessions/SessionsSqlite.js"
import { ToolRegistryConfigured } from "./tools/ToolRegistryConfigured.js"
import { readTraces, TraceStoreFile } from "./traces/TraceStoreFile.js"
import { RecordedTraces, TraceStoreMemory } from "./traces/TraceStoreMemory.js"
import { makeWorkspace } from "./workspace/WorkspaceLive.js"

/** A fresh workspace in a temporary folder, removed when the layer's scope closes. */
export const WorkspaceTemp = Layer.scoped(
  Workspace,
  Effect.flatMap(
    FileSystem.FileSystem,
    (fs) => Effect.flatMap(fs.makeTempDirectoryScoped({ prefix: "myclaw-test-" }), makeWorkspace)
  ).pipe(Effect.orDie)
)

/** The production file store, with RecordedTraces reading the files back. */
const TraceStoreFileRecorded = Compose.merge(
  TraceStoreFile,
  Layer.effect(
    RecordedTraces,
    Effect.map(Workspace, (workspace) => ({
      all: Effect.orDie(readTraces(NodePath.join(workspace.root, ".audit", "traces")))
    }))
  )
)

/** The workspace in `home` (created when missing): a second layer on the same home is a restart. */
const WorkspaceAt = (home: string) => Layer.effect(Workspace, makeWorkspace(home).pipe(Effect.orDie))

export interface TestOptions {
  /** A workspace folder that outlives the layer (default: a fresh temporary one, removed with the layer). */
  readonly home?: string
  /** The model's answers, in order; ignored when `llm` is given. */
  readonly script?: ReadonlyArray<ScriptEntry>
  /** Another model layer (e.g. `LlmFunction` to see the requests, or `LlmLive` against a local server). */
  readonly llm?: Layer.Layer<Llm, unknown, MyclawConfig | Budget | FileSystem.FileSystem | HttpClient.HttpClient>
  /** `file` keeps traces as production does, in the workspace, and reads them back from there. */
  readonly traceStore?: "memory" | "file"
  /**
   * `sqlite` keeps sessions as production does, in the workspace's SQLite file (the default when traces are
   * kept in files); `memory` otherwise; or another sessions layer (e.g. one that counts its reads).
   */
  readonly sessions?: "memory" | "sqlite" | Layer.Layer<Sessions, unknown, Foundation | IdGenerator>
  /**
   * Tools added to the built-in ones (and to those of the MCP servers the configuration names); made by an
   * effect when they resolve secrets at execution.
   */
  readonly tools?: ReadonlyArray<Tool> | Effect.Effect<ReadonlyArray<Tool>, never, Secrets>
  /** Another secrets layer (default: the encrypted store of the temp workspace, as production reads it). */
  readonly secrets?: Layer.Layer<Secrets, never, Foundation>
  /** myclaw.json as a user writes it (defaults apply), decoded like the real file. */
  readonly config?: Partial<typeof AppConfig.Encoded>
  /** The owner's answer to each approval request, through the real broker and router (default: deny). */
  readonly approve?: (request: ApprovalRequest) => boolean
  /**
   * false: no scripted owner answers on any channel; approvals are routed as in production (to the askers and
   * answering channels the test registers, or denied when there is none).
   */
  readonly scriptedOwner?: boolean
  /** Another audit log (e.g. one whose appends fail, or the file log of the temp workspace). */
  readonly audit?: Layer.Layer<AuditLog, unknown, Foundation>
  /** Another Approvals layer (it may use the policy, the audit log and the router of the graph). */
  readonly approvals?: Layer.Layer<Approvals, unknown, Policy | AuditLog | MyclawConfig | Workspace | IdGenerator>
  /** Another id generator (e.g. IdGeneratorSequential, for reproducible prompts and traces). */
  readonly ids?: Layer.Layer<IdGenerator>
}

/** The production graph with fakes at the edges: scripted model, scripted owner, memory traces, temp workspace. */
export const TestLayer = (options: TestOptions) => {
  const approve = options.approve ?? (() => false)
  const owner = ApprovalAskerScripted((pending) =>
    Option.some(ownerAnswer(pending, approve(pending.request) ? { _tag: "Once" } : { _tag: "Deny" }))
  )
  const approvals: Layer.Layer<
    Approvals,
    unknown,
    Policy | AuditLog | MyclawConfig | Workspace | IdGenerator | ApprovalChannel | FileSystem.FileSystem
  > = options.approvals ?? ApprovalsSqlite
  const kept = options.sessions ?? (options.traceStore === "file" ? "sqlite" : "memory")
  const sessions: Layer.Layer<Sessions, unknown, Foundation | IdGenerator> = typeof kept !== "string"
    ? kept
    : kept === "sqlite"
    ? SessionsSqlite
    : SessionsMemory
  return makeAppLayer({
    base: MyclawConfigFixed(Schema.decodeUnknownSync(AppConfig)(options.config ?? {})).pipe(
      Compose.merge(options.home === undefined ? WorkspaceTemp : WorkspaceAt(options.home)),
      Compose.provideMerge(Compose.merge(FilesAndPaths, NodeHttpClient.layerUndici))
    ),
    ids: options.ids ?? IdGeneratorLive,
    audit: options.audit ?? AuditLogMemory,
    budget: BudgetLive,
    traceStore: options.traceStore === "file" ? TraceStoreFileRecorded : TraceStoreMemory,
    sessions,
    tools: Effect.isEffect(options.tools)
      ? Layer.unwrapEffect(Effect.map(options.tools, (tools) => ToolRegistryConfigured(tools)))
      : ToolRegistryConfigured(options.tools ?? []),
    secrets: options.secrets,
    llm: options.llm ?? LlmScripted(options.script ?? []),
    approvals: Compose.provideMerge(
      approvals,
      options.scriptedOwner === false ? ApprovalRouterLive : Compose.provideMerge(owner, ApprovalRouterLive)
    )
  })
}
