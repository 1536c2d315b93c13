import { Effect, Layer } from "effect"
import { argsHash } from "../../domain/ArgsHash.js"
import type { ActionStep, ExecutionTrace } from "../../domain/ExecutionTrace.js"
import type { ReplayProbe } from "../../domain/ReplayProbe.js"
import type { ToolResult } from "../../domain/ToolCall.js"
import { ToolRegistry } from "../../services/ToolRegistry.js"

export interface ToolReplayOptions {
  /** Side-effecting calls: their recorded result (default), or a dry run that reports what would have run. */
  readonly sideEffects: "recorded" | "dry-run"
  /** Read-only calls: their recorded result (default), or run again. */
  readonly readOnly: "recorded" | "live"
}

/**
 * The tool catalog of a replay: the given registry's catalog and validation, with executions answered from the
 * recording (the recorded result of the first unused call of the same tool with the same arguments). A
 * side-effecting tool is never executed.
 */
export const ToolRegistryReplay = <E, R>(
  base: Layer.Layer<ToolRegistry, E, R>,
  recorded: ExecutionTrace,
  probe: ReplayProbe,
  options: ToolReplayOptions
) =>
  Layer.effect(
    ToolRegistry,
    Effect.map(ToolRegistry, (registry) => {
      const results: Array<{ readonly step: ActionStep; readonly hash: string }> = []
      for (const step of recorded.steps) {
        if (step.kind === "action" && step.exec_result !== null) results.push({ step, hash: argsHash(step.args) })
      }
      const fromRecording = (tool: string, args: unknown): ToolResult | undefined => {
        const hash = argsHash(args)
        const i = results.findIndex((entry) => entry.step.tool_name === tool && entry.hash === hash)
        return i < 0 ? undefined : results.splice(i, 1)[0]!.step.exec_result!
      }
      return ToolRegistry.of({
        ...registry,
        execute: (prepared, tool) =>
          Effect.suspend((): Effect.Effect<ToolResult> => {
            if (!tool.hasSideEffects && options.readOnly === "live") {
              probe.tools.executed++
              return registry.execute(prepared, tool)
            }
            if (tool.hasSideEffects && options.sideEffects === "dry-run") {
              probe.tools.dryRun++
              return Effect.succeed({ status: "success", content: `dry run, not executed: ${prepared.summary}` })
            }
            const result = fromRecording(tool.name, prepared.args)
            if (result === undefined) {
              probe.tools.missing++
              return Effect.succeed({
                status: "failed",
                content: `replay: the recording has no result for ${tool.name} with these arguments`
              })
            }
            probe.tools.served++
            return Effect.succeed(result)
          })
      })
    })
  ).pipe(Layer.provide(base))
