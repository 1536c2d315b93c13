import { Effect, Option } from "effect"
import { type ExecutionTrace, pathOf } from "../../domain/ExecutionTrace.js"
import { cutAt } from "../../domain/Text.js"
import type { ToolCall } from "../../domain/ToolCall.js"
import type { TurnInput } from "../../services/AgentRuntime.js"
import { ToolRegistry } from "../../services/ToolRegistry.js"
import { TraceStore } from "../../services/TraceStore.js"
import { RuleDecision } from "./RuleDecision.js"
import { snapshotsOf } from "./UndoSnapshots.js"

/** How far back `/undo` looks for the session's last turn (rule answers in between are skipped). */
const LOOK_BACK = 20
const RESTORE_TOOL = "fs_write"

const answer = (response: string, metadata?: Readonly<Record<string, unknown>>) =>
  RuleDecision.Answer({ rule: "undo", outcome: "success", response, ...(metadata === undefined ? {} : { metadata }) })

/** The session's last turn served by something other than a rule, unless an `/undo` already undid it. */
const lastTurn = (sessionId: string) =>
  Effect.gen(function*() {
    const store = yield* TraceStore
    const listed = yield* store.list({ sessionId, limit: LOOK_BACK })
    const undone = new Set<string>()
    for (const listing of [...listed].reverse()) {
      const trace = yield* store.get(listing.trace_id)
      if (Option.isNone(trace)) continue
      if (pathOf(trace.value) !== "rule") {
        return { trace: trace.value, undone: undone.has(trace.value.trace_id) }
      }
      const undid = trace.value.metadata.undid
      if (typeof undid === "string") undone.add(undid)
    }
    return undefined
  })

/**
 * `/undo`: the last turn's file writes, put back as they were before it from the snapshots kept when they ran.
 * The restoring writes are ordinary tool calls, so the owner approves them as any write.
 */
export const undo = (input: TurnInput, traceId: string) =>
  Effect.gen(function*() {
    const found = yield* lastTurn(input.sessionId)
    if (found === undefined) return answer("There is no earlier turn in this session to undo.")
    const { trace, undone } = found
    if (undone) return answer(`The last turn (trace ${trace.trace_id}) was already undone.`)
    const snapshots = yield* snapshotsOf(trace.trace_id)
    if (snapshots.length === 0) {
      return answer(`The last turn (trace ${trace.trace_id}) wrote no files: nothing to undo.`)
    }
    if ((yield* ToolRegistry).find(RESTORE_TOOL) === undefined) {
      return answer(`Not undone: the ${RESTORE_TOOL} tool is not in the catalog.`)
    }
    const notes: Array<string> = []
    const calls: Array<ToolCall> = []
    for (const snapshot of snapshots) {
      if (!snapshot.existed) {
        notes.push(`${snapshot.path} did not exist before that turn; there is no delete tool, so remove it by hand.`)
      } else if (snapshot.content === null) {
        notes.push(`${snapshot.path} was too large to keep a copy of: it cannot be restored.`)
      } else {
        calls.push({
          id: `${traceId}-undo-${calls.length + 1}`,
          name: RESTORE_TOOL,
          args: { path: snapshot.path, content: snapshot.content }
        })
      }
    }
    const metadata = { rule: "undo", undid: trace.trace_id }
    if (calls.length === 0) return answer(notes.join("\n"), metadata)
    return RuleDecision.Act({
      rule: "undo",
      calls,
      metadata,
      answer: (steps) => {
        const restored = steps.filter((step) => step.exec_result?.status === "success").map((step) =>
          (step.args as { readonly path: string }).path
        )
        return [`Undid the writes of trace ${describe(trace)}: restored ${restored.join(", ")}.`, ...notes].join("\n")
      }
    })
  }).pipe(
    Effect.catchTag("TraceStoreError", (error) => Effect.succeed(answer(`Not undone: ${error.message}`)))
  )

const describe = (trace: ExecutionTrace): string => `${trace.trace_id} ("${cutAt(trace.user_message, 60)}")`
