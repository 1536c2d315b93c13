import { Effect, Layer } from "effect"
import { argsHash } from "../../domain/ArgsHash.js"
import type { ToolResult } from "../../domain/ToolCall.js"
import { currentReplay } from "../../services/Replaying.js"
import { ToolRegistry } from "../../services/ToolRegistry.js"
import * as Compose from "../Compose.js"

export type { ToolReplayOptions } from "../../services/Replaying.js"

/**
 * The tool catalog of a replay: the given registry's catalog and validation, with executions answered from the
 * recording (the recorded result of the first unused call of the same tool with the same arguments), as the
 * replay's options say. A side-effecting tool is never executed.
 */
export const ToolRegistryReplay = <E, R>(base: Layer.Layer<ToolRegistry, E, R>) =>
  Layer.effect(
    ToolRegistry,
    Effect.map(ToolRegistry, (registry) =>
      ToolRegistry.of({
        ...registry,
        execute: (prepared, tool) =>
          Effect.flatMap(currentReplay, (session): Effect.Effect<ToolResult> => {
            const { options, probe } = session
            if (!tool.hasSideEffects && options.readOnly === "live") {
              probe.tools.executed++
              return registry.execute(prepared, tool)
            }
            if (tool.hasSideEffects && options.sideEffects === "dry-run") {
              probe.tools.dryRun++
              return Effect.succeed({ status: "success", content: `dry run, not executed: ${prepared.summary}` })
            }
            const hash = argsHash(prepared.args)
            const i = session.results.findIndex((entry) => entry.tool === tool.name && entry.hash === hash)
            if (i < 0 && options.unrecorded === "fallback") {
              if (tool.hasSideEffects) {
                probe.tools.dryRun++
                return Effect.succeed({ status: "success", content: `dry run, not executed: ${prepared.summary}` })
              }
              probe.tools.executed++
              return registry.execute(prepared, tool)
            }
            if (i < 0) {
              probe.tools.missing++
              return Effect.succeed({
                status: "failed",
                content: `replay: the recording has no result for ${tool.name} with these arguments`
              })
            }
            probe.tools.served++
            return Effect.succeed(session.results.splice(i, 1)[0]!.result)
          })
      }))
  ).pipe(Compose.provide(base))
