import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as NodePath from "node:path"
import { IdGeneratorLive } from "../../src/layers/ids/IdGeneratorLive.js"
import { SessionsMemory } from "../../src/layers/sessions/SessionsMemory.js"
import { SessionsSqliteAt } from "../../src/layers/sessions/SessionsSqlite.js"
import { sessionsContract } from "./SessionsContract.js"

sessionsContract("memory", () => SessionsMemory.pipe(Layer.provide(IdGeneratorLive)))

for (const fsync of ["always", "batch"] as const) {
  sessionsContract(`SQLite in a temporary folder (fsync ${fsync})`, () =>
    Layer.unwrapScoped(
      Effect.map(
        Effect.flatMap(FileSystem.FileSystem, (fs) => fs.makeTempDirectoryScoped({ prefix: "myclaw-sessions-" })),
        (dir) => SessionsSqliteAt(NodePath.join(dir, ".state", "sessions.sqlite"), fsync)
      )
    ).pipe(Layer.provide(Layer.merge(NodeContext.layer, IdGeneratorLive))))
}
