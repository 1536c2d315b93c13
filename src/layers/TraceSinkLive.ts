import { Cause, DateTime, Effect, Exit, Layer, Option } from "effect"
import { messageOf } from "../domain/Errors.js"
import type { ExecutionTrace } from "../domain/ExecutionTrace.js"
import type { NewSessionTurn } from "../domain/Session.js"
import type { TraceListing } from "../domain/TraceListing.js"
import { traceRecord } from "../domain/TraceSummary.js"
import { AuditLog } from "../services/AuditLog.js"
import { Metrics } from "../services/Metrics.js"
import { Sessions } from "../services/Sessions.js"
import { TraceSink } from "../services/TraceSink.js"
import { pastTaint, TraceStore } from "../services/TraceStore.js"

/**
 * How many of the newest traces are checked against the audit log and the sessions at start: more than the turns
 * whose session records can be waiting to be written when a process stops.
 */
const CHECKED_AT_START = 256

/**
 * The newest traces of the store whose summary is not in the audit log (a process died between the two
 * writes, or another process is between them now) are named in a warning at start.
 */
const flagUnaudited = (listed: ReadonlyArray<TraceListing>, audit: AuditLog["Type"]) =>
  Effect.gen(function*() {
    if (listed.length === 0) return
    const since = Math.min(...listed.map((listing) => Date.parse(listing.started_at)))
    const unaudited = yield* audit.unaudited(new Set(listed.map((listing) => listing.trace_id)), since)
    if (unaudited.size === 0) return
    const missing = listed.filter((listing) => unaudited.has(listing.trace_id)).map((listing) => listing.trace_id)
    yield* Effect.logWarning(
      `${missing.length} traces are in the trace store but have no record in the audit log (a turn cut short ` +
        `between the two writes): ${missing.join(", ")}`
    )
  }).pipe(
    Effect.catchAll((error) => Effect.logWarning(`cannot compare the traces with the audit log: ${error.message}`))
  )

/**
 * The newest traces whose turn is not in its session (a process stopped before the session's record of it was
 * written) are added to their sessions again from the traces, oldest first, and named in a warning.
 */
const recoverTurns = (listed: ReadonlyArray<TraceListing>, store: TraceStore["Type"], sessions: Sessions["Type"]) =>
  Effect.gen(function*() {
    const missing = yield* sessions.unrecorded(
      listed.map((listing) => ({
        sessionId: listing.session_id,
        traceId: listing.trace_id,
        startedAt: Date.parse(listing.started_at)
      }))
    )
    const recovered: Array<string> = []
    for (const traceId of missing) {
      const trace = yield* store.get(traceId)
      if (Option.isNone(trace)) continue
      const exit = yield* Effect.exit(sessions.recordTurn(sessionTurnOf(trace.value)))
      // A turn its session's owner refuses was refused when it closed too: it is left out again.
      if (Exit.isSuccess(exit)) recovered.push(traceId)
      else if (!Option.exists(Cause.failureOption(exit.cause), (error) => error.reason === "Forbidden")) yield* exit
    }
    if (recovered.length === 0) return
    yield* Effect.logWarning(
      `${recovered.length} turns were not in their sessions (the process stopped before their records were ` +
        `written): added again from their traces: ${recovered.join(", ")}`
    )
  }).pipe(
    // A defect too: the start goes on without what could not be added back (the next start tries again).
    Effect.catchAllCause((cause) =>
      Effect.logWarning(`cannot compare the traces with the sessions: ${messageOf(Cause.squash(cause))}`)
    )
  )

/** What a closed turn adds to its session: the exchange, its taint and what its prompts cost. */
export const sessionTurnOf = (trace: ExecutionTrace): NewSessionTurn => {
  const finished = trace.finished_at ?? trace.started_at
  const taint = pastTaint(trace.metadata, DateTime.formatIso(finished))
  let promptTokens = 0
  let cachedTokens = 0
  let responseTokens = 0
  for (const step of trace.steps) {
    if (step.kind !== "thought") continue
    promptTokens += step.prompt_tokens
    cachedTokens += step.cached_tokens
    responseTokens += step.response_tokens
  }
  return {
    sessionId: trace.session_id,
    owner: trace.channel,
    traceId: trace.trace_id,
    userMessage: trace.user_message,
    finalResponse: trace.final_response,
    at: DateTime.toEpochMillis(finished),
    promptTokens,
    cachedTokens,
    responseTokens,
    taintedBy: taint.taintedBy ?? [],
    answeredAt: taint.answeredAt ?? null
  }
}

/**
 * The closed trace is persisted, then added to its session (the history of the session's next turns: its record
 * is written a little later, with others), then its summary appended to the audit log, then counted.
 */
export const TraceSinkLive = Layer.effect(
  TraceSink,
  Effect.gen(function*() {
    const store = yield* TraceStore
    const audit = yield* AuditLog
    const metrics = yield* Metrics
    const sessions = yield* Sessions
    const listed = yield* store.list({ limit: CHECKED_AT_START }).pipe(
      Effect.catchAll((error) =>
        Effect.as(Effect.logWarning(`cannot list the newest traces at start: ${error.message}`), [])
      )
    )
    yield* flagUnaudited(listed, audit)
    yield* recoverTurns(listed, store, sessions)
    const close = (trace: ExecutionTrace) =>
      store.persist(trace).pipe(
        Effect.zipRight(
          sessions.recordTurn(sessionTurnOf(trace)).pipe(
            Effect.catchAll((error) =>
              error.reason === "Forbidden"
                ? Effect.void
                : Effect.logError(`the turn ${trace.trace_id} is not in its session's history: ${error.message}`)
            )
          )
        ),
        Effect.zipRight(
          audit.append(traceRecord(trace)).pipe(
            Effect.catchAll((error) =>
              Effect.logError(`the trace ${trace.trace_id} is not in the audit log: ${error.message}`)
            )
          )
        ),
        Effect.ensuring(metrics.traceClosed(trace))
      )
    return TraceSink.of({ close })
  })
)
