import { HttpClient, type HttpClientError } from "@effect/platform"
import { NodeFileSystem, NodePath } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import { isExporting } from "../programs/Spans.js"
import * as Compose from "./Compose.js"
import { MyclawConfigLive, MyclawConfigReadOnly } from "./MyclawConfigLive.js"
import { WorkspaceExisting, WorkspaceLive } from "./workspace/WorkspaceLive.js"

// The layers of the commands that need no agent runtime (budget, doctor, backup, audit): kept apart from Main so
// that those commands load neither the tools, the providers nor the turn's services.

/**
 * The HTTP client (undici), loaded and started on the first request: the commands that make none (budget, audit,
 * backup) do not pay for loading it. Its span for each request (with the trace headers it sends) is made only when
 * a tracer exports spans, as the turn's own are: otherwise nobody reads it.
 */
export const HttpClientOnDemand = Layer.scoped(
  HttpClient.HttpClient,
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const exporting = isExporting(yield* Effect.tracer)
    const client = yield* Effect.cached(
      Effect.promise(() => import("@effect/platform-node/NodeHttpClient")).pipe(
        Effect.flatMap((module) => Layer.buildWithScope(module.layerUndici, scope)),
        Effect.map((context) => {
          const undici = Context.get(context, HttpClient.HttpClient)
          return exporting ? undici : HttpClient.withTracerDisabledWhen(undici, () => true)
        })
      )
    )
    return HttpClient.makeWith<never, never, HttpClientError.HttpClientError, never>(
      (request) => Effect.flatMap(request, (ready) => Effect.flatMap(client, (undici) => undici.execute(ready))),
      Effect.succeed
    )
  })
)

/**
 * Files and paths: the platform every graph runs on, the agent's included. Node's process, terminal and worker
 * services (`NodeContext`) are left out: no part uses them (the shell tool, the backup and the terminal asker call
 * Node directly), and they cost a start-up their modules, child_process and a dozen layer nodes.
 */
export const FilesAndPaths = Compose.merge(NodeFileSystem.layer, NodePath.layer)

/** Workspace and configuration over files and paths: the base of every command that writes (`BaseLayer` in Main). */
export const FilesBaseLayer = MyclawConfigLive.pipe(
  Compose.provideMerge(WorkspaceLive),
  Compose.provideMerge(Compose.merge(FilesAndPaths, HttpClientOnDemand))
)

/** The same, for read-only commands: the workspace and its configuration must exist already, nothing is written. */
export const FilesReadOnlyBaseLayer = MyclawConfigReadOnly.pipe(
  Compose.provideMerge(WorkspaceExisting),
  Compose.provideMerge(Compose.merge(FilesAndPaths, HttpClientOnDemand))
)
