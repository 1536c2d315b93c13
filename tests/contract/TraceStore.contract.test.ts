import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { makeTraceStoreFile } from "../../src/layers/traces/TraceStoreFile.js"
import { TraceStoreMemory } from "../../src/layers/traces/TraceStoreMemory.js"
import { TraceStore } from "../../src/services/TraceStore.js"
import { traceStoreContract } from "./TraceStoreContract.js"

traceStoreContract("memory", () => TraceStoreMemory)

for (const fsync of ["always", "batch"] as const) {
  traceStoreContract(`file (fsync: ${fsync}), a fresh temp folder per test`, () =>
    Layer.scoped(
      TraceStore,
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-traces-contract-" })
        return yield* makeTraceStoreFile(dir, fsync)
      })
    ).pipe(Layer.provide(NodeContext.layer)))
}
