import type { RequestHash } from "./ExecutionTrace.js"

/** A request the replay sent that does not match the recorded one: which parts differ, and both sides. */
export interface RequestMismatch {
  /** Which Thought of the turn (0-based). */
  readonly thought: number
  readonly parts: ReadonlyArray<"tier" | "system" | "messages" | "tools">
  readonly recorded: RequestHash | undefined
  readonly replayed: RequestHash
  /** The whole recorded request, when the trace kept it (`traces.recordRequests`). */
  readonly recordedRequest: unknown
  readonly replayedRequest: unknown
}

/** What a replay saw happen: requests that differ, Thoughts beyond the recording, tool calls by how they were met. */
export interface ReplayProbe {
  readonly requests: Array<RequestMismatch>
  extraThoughts: number
  readonly tools: {
    /** Calls that really ran (read-only tools with `liveReadonly`). */
    executed: number
    /** Calls answered with their recorded result. */
    served: number
    /** Side-effecting calls answered by a dry run. */
    dryRun: number
    /** Calls the recording had no result for. */
    missing: number
  }
}

export const makeReplayProbe = (): ReplayProbe => ({
  requests: [],
  extraThoughts: 0,
  tools: { executed: 0, served: 0, dryRun: 0, missing: 0 }
})
