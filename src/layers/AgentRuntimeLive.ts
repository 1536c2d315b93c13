import { Effect, Layer } from "effect"
import { runTurn } from "../programs/Turn.js"
import { AgentRuntime } from "../services/AgentRuntime.js"
import { Approvals } from "../services/Approvals.js"
import { AuditLog } from "../services/AuditLog.js"
import { Budget } from "../services/Budget.js"
import { Llm } from "../services/Llm.js"
import { MyclawConfig } from "../services/MyclawConfig.js"
import { Policy } from "../services/Policy.js"
import { PromptBuilder } from "../services/PromptBuilder.js"
import { ToolRegistry } from "../services/ToolRegistry.js"
import { TraceStore } from "../services/TraceStore.js"

/** The runtime over whatever services the layer below provides: the turn program, with its services bound. */
export const AgentRuntimeLive = Layer.effect(
  AgentRuntime,
  Effect.map(
    Effect.context<
      MyclawConfig | Llm | Budget | TraceStore | PromptBuilder | ToolRegistry | Policy | Approvals | AuditLog
    >(),
    (context) => AgentRuntime.of({ handle: (input) => Effect.provide(runTurn(input), context) })
  )
)
