import { Effect, FiberRef } from "effect"
import { argsHash } from "../domain/ArgsHash.js"
import type { ApprovalRecord, BudgetRead, ExecutionTrace, ThoughtStep } from "../domain/ExecutionTrace.js"
import type { MessagesFold } from "../domain/MessagesFold.js"
import { makeReplayProbe, type ReplayProbe } from "../domain/ReplayProbe.js"
import { messagesFingerprint } from "../domain/RequestFingerprint.js"
import type { SessionSummary } from "../domain/Session.js"
import type { ToolResult } from "../domain/ToolCall.js"
import type { IdKind } from "./IdGenerator.js"

/** How a replay meets tool calls. */
export interface ToolReplayOptions {
  /** Side-effecting calls: their recorded result (default), or a dry run that reports what would have run. */
  readonly sideEffects: "recorded" | "dry-run"
  /** Read-only calls: their recorded result (default), or run again. */
  readonly readOnly: "recorded" | "live"
  /**
   * A call the recording has no result for: `fail` (a failed result the replay reports), or `fallback` (a dry
   * run for a side-effecting tool, a real run for a read-only one): what a live eval's new calls get.
   */
  readonly unrecorded?: "fail" | "fallback" | undefined
}

/**
 * One replay in progress: the recording it serves from, what is left of it, and what the replay saw. The replay
 * layers of a graph serve whichever session the calling fiber carries (CurrentReplay), so one graph replays
 * many turns side by side.
 */
export interface ReplaySession {
  readonly recorded: ExecutionTrace
  readonly options: ToolReplayOptions
  readonly probe: ReplayProbe
  readonly thoughts: ReadonlyArray<ThoughtStep>
  nextThought: number
  /** The messages of its last Thought, fingerprinted: the next Thought hashes only the messages added since. */
  readonly fingerprinted: MessagesFold<string>
  readonly ids: Map<IdKind, Array<string>>
  readonly extraIds: Map<IdKind, number>
  readonly approvals: Array<{ readonly tool: string; readonly approval: ApprovalRecord }>
  /** The budget statuses the turn read, still to be read (the last stays). */
  readonly budgetReads: Array<BudgetRead>
  readonly results: Array<{ readonly tool: string; readonly hash: string; readonly result: ToolResult }>
  /**
   * The summary this replay added to the replayed session (never stored): from then on the session's history is
   * the compacted one, as it was for the recorded turn's prompt.
   */
  summaryAdded: SessionSummary | null
  /** The recorded failure of the summary call made on entering the turn, until that call fails with it. */
  compactionFailure: unknown
}

export const makeReplaySession = (recorded: ExecutionTrace, options: ToolReplayOptions): ReplaySession => {
  const ids = new Map<IdKind, Array<string>>()
  for (const drawn of recorded.replay?.ids ?? []) {
    const queue = ids.get(drawn.kind) ?? []
    queue.push(drawn.id)
    ids.set(drawn.kind, queue)
  }
  const approvals: ReplaySession["approvals"] = []
  const results: ReplaySession["results"] = []
  for (const step of recorded.steps) {
    if (step.kind !== "action") continue
    if (step.approval !== null) approvals.push({ tool: step.tool_name, approval: step.approval })
    if (step.exec_result !== null) {
      results.push({ tool: step.tool_name, hash: argsHash(step.args), result: step.exec_result })
    }
  }
  return {
    recorded,
    options,
    probe: makeReplayProbe(),
    thoughts: recorded.steps.filter((step): step is ThoughtStep => step.kind === "thought"),
    nextThought: 0,
    fingerprinted: messagesFingerprint(),
    ids,
    extraIds: new Map(),
    approvals,
    budgetReads: [...(recorded.replay?.budget ?? [])],
    results,
    summaryAdded: null,
    compactionFailure: recorded.replay?.compaction?.error
  }
}

/** The replay the current fiber is running, if any. */
export const CurrentReplay = FiberRef.unsafeMake<ReplaySession | null>(null)

/** The current replay; calling a replay layer outside a replay is a defect of the program that built the graph. */
export const currentReplay: Effect.Effect<ReplaySession> = Effect.flatMap(
  FiberRef.get(CurrentReplay),
  (session) =>
    session === null
      ? Effect.dieMessage("a replay layer was used outside a replay (CurrentReplay is not set)")
      : Effect.succeed(session)
)
