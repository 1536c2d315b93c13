import { Effect, Layer } from "effect"
import { runTurn } from "../programs/Turn.js"
import { AgentRuntime } from "../services/AgentRuntime.js"
import { Approvals } from "../services/Approvals.js"
import { AuditLog } from "../services/AuditLog.js"
import { Budget } from "../services/Budget.js"
import { Llm } from "../services/Llm.js"
import { Metrics } from "../services/Metrics.js"
import { MyclawConfig } from "../services/MyclawConfig.js"
import { Policy } from "../services/Policy.js"
import { PromptBuilder } from "../services/PromptBuilder.js"
import { ToolRegistry } from "../services/ToolRegistry.js"
import { TraceStore } from "../services/TraceStore.js"
import { Workspace } from "../services/Workspace.js"

/**
 * The runtime over whatever services the layer below provides: the turn program, with its services bound, and
 * every turn reported to Metrics (active while it runs, then its closed trace).
 */
export const AgentRuntimeLive = Layer.effect(
  AgentRuntime,
  Effect.gen(function*() {
    const metrics = yield* Metrics
    const context = yield* Effect.context<
      | MyclawConfig
      | Llm
      | Budget
      | TraceStore
      | PromptBuilder
      | ToolRegistry
      | Policy
      | Approvals
      | AuditLog
      | Workspace
    >()
    return AgentRuntime.of({
      handle: (input) =>
        Effect.acquireUseRelease(
          metrics.turnStarted(input.channel),
          () => Effect.tap(Effect.provide(runTurn(input), context), (trace) => metrics.traceClosed(trace)),
          () => metrics.turnEnded(input.channel)
        )
    })
  })
)
