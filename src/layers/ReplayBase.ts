import { FileSystem } from "@effect/platform"
import { Effect, Layer } from "effect"
import type { AppConfig } from "../domain/AppConfig.js"
import { Workspace } from "../services/Workspace.js"
import { FilesAndPaths, HttpClientOnDemand } from "./Base.js"
import * as Compose from "./Compose.js"
import { MyclawConfigFixed } from "./MyclawConfigLive.js"
import { makeWorkspace } from "./workspace/WorkspaceLive.js"

/** A fresh workspace with the default files in a temporary folder, removed when the layer's scope closes. */
export const WorkspaceTempReplay = Layer.scoped(
  Workspace,
  Effect.flatMap(
    FileSystem.FileSystem,
    (fs) => Effect.flatMap(fs.makeTempDirectoryScoped({ prefix: "myclaw-replay-" }), makeWorkspace)
  )
)

/** What replays run on when there is no owner's workspace: this configuration and a temporary workspace. */
export const ReplayBaseTemp = (config: AppConfig) =>
  MyclawConfigFixed(config).pipe(
    Compose.merge(WorkspaceTempReplay),
    Compose.provideMerge(Compose.merge(FilesAndPaths, HttpClientOnDemand))
  )
