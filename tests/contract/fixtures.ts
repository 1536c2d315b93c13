import { Clock, Deferred, Effect, FiberId, Schema } from "effect"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import type { ActionStep, ExecutionTrace, ThoughtStep } from "../../src/domain/ExecutionTrace.js"
import type { LlmRequest } from "../../src/domain/LlmTypes.js"
import type { ScriptEntry } from "../../src/domain/ScriptEntry.js"
import { defineTool } from "../../src/domain/Tool.js"
import { LlmFunction } from "../../src/layers/llm/LlmScripted.js"
import type { Workspace } from "../../src/services/Workspace.js"

export const thoughts = (trace: ExecutionTrace): ReadonlyArray<ThoughtStep> =>
  trace.steps.filter((step): step is ThoughtStep => step.kind === "thought")

export const actions = (trace: ExecutionTrace): ReadonlyArray<ActionStep> =>
  trace.steps.filter((step): step is ActionStep => step.kind === "action")

/** A model that answers from a script and keeps a copy of every request it was sent. */
export const recordingLlm = (script: ReadonlyArray<ScriptEntry>) => {
  const requests: Array<LlmRequest> = []
  const layer = LlmFunction((request) => {
    requests.push({ ...request, messages: [...request.messages] })
    return script[requests.length - 1] ?? { error: { reason: "BadResponse", message: "the test script is exhausted" } }
  })
  return { requests, layer }
}

type WorkspaceService = Workspace["Type"]

export const writeFile = (workspace: WorkspaceService, path: string, content: string) =>
  Effect.promise(() => NodeFs.writeFile(NodePath.join(workspace.root, path), content))

export const probeTools = {
  exists: (workspace: WorkspaceService, path: string) =>
    Effect.promise(() => NodeFs.access(NodePath.join(workspace.root, path)).then(() => true, () => false)),
  read: (workspace: WorkspaceService, path: string) =>
    Effect.promise(() => NodeFs.readFile(NodePath.join(workspace.root, path), "utf8")),
  /** `slow` sleeps 10 s (on the Effect clock), `fast` answers at once; both record that they started. */
  make: () => {
    const starts: Array<string> = []
    /** When each tool started and finished, on the Effect clock. */
    const spans: Array<{ readonly name: string; readonly start: number }> = []
    const firstStart = Deferred.unsafeMake<void>(FiberId.none)
    const start = (name: string) =>
      Effect.zipRight(
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.sync(() => (starts.push(name), spans.push({ name, start: now })))),
        Deferred.succeed(firstStart, undefined)
      )
    const tools = [
      defineTool({
        name: "slow",
        description: "Takes ten seconds.",
        parameters: Schema.Struct({}),
        hasSideEffects: false,
        external: false,
        execute: () =>
          start("slow").pipe(
            Effect.zipRight(Effect.sleep("10 seconds")),
            Effect.as({ status: "success", content: "slept 10 s" } as const)
          )
      }),
      defineTool({
        name: "fast",
        description: "Answers at once.",
        parameters: Schema.Struct({}),
        hasSideEffects: false,
        external: false,
        execute: () => Effect.as(start("fast"), { status: "success", content: "fast" } as const)
      })
    ]
    return { tools, starts, spans, started: Deferred.await(firstStart) }
  }
}
