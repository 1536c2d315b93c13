import { HttpClient, type HttpClientError } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import { AuditLogFile } from "./audit/AuditLogFile.js"
import { BudgetLive, BudgetReadOnly } from "./budget/BudgetLive.js"
import { IdGeneratorLive } from "./ids/IdGeneratorLive.js"
import { MyclawConfigLive, MyclawConfigReadOnly } from "./MyclawConfigLive.js"
import { makeStateLayer } from "./StateLayer.js"
import { WorkspaceExisting, WorkspaceLive } from "./workspace/WorkspaceLive.js"

// The layers of the commands that need no agent runtime (budget, doctor, backup, audit): kept apart from Main so
// that those commands load neither the tools, the providers nor the turn's services.

/**
 * The HTTP client (undici), loaded and started on the first request: the commands that make none (budget, audit,
 * backup) do not pay for loading it.
 */
export const HttpClientOnDemand = Layer.scoped(
  HttpClient.HttpClient,
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const client = yield* Effect.cached(
      Effect.promise(() => import("@effect/platform-node/NodeHttpClient")).pipe(
        Effect.flatMap((module) => Layer.buildWithScope(module.layerUndici, scope)),
        Effect.map((context) => Context.get(context, HttpClient.HttpClient))
      )
    )
    return HttpClient.makeWith<never, never, HttpClientError.HttpClientError, never>(
      (request) => Effect.flatMap(request, (ready) => Effect.flatMap(client, (undici) => undici.execute(ready))),
      Effect.succeed
    )
  })
)

/** Workspace and configuration: what every command needs first. */
export const BaseLayer = MyclawConfigLive.pipe(
  Layer.provideMerge(WorkspaceLive),
  Layer.provideMerge(Layer.merge(NodeContext.layer, HttpClientOnDemand))
)

/** Workspace and configuration for read-only commands: both must exist already, nothing is written. */
export const ReadOnlyBaseLayer = MyclawConfigReadOnly.pipe(
  Layer.provideMerge(WorkspaceExisting),
  Layer.provideMerge(Layer.merge(NodeContext.layer, HttpClientOnDemand))
)

/** The signed audit log and the budget kept beside it. */
export const StateLayer = makeStateLayer({ ids: IdGeneratorLive, audit: AuditLogFile, budget: BudgetLive })

/** The audit log and the budget as read-only commands see it: the budget store is neither created nor written. */
export const StateReadOnlyLayer = makeStateLayer({ ids: IdGeneratorLive, audit: AuditLogFile, budget: BudgetReadOnly })
