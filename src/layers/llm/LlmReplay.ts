import { Effect, Either, Layer, Schema } from "effect"
import { BudgetExceeded, LlmError } from "../../domain/Errors.js"
import type { ThoughtStep } from "../../domain/ExecutionTrace.js"
import type { LlmRequest, LlmResponse } from "../../domain/LlmTypes.js"
import { onFirstCall } from "../../domain/OnFirstCall.js"
import type { RequestMismatch } from "../../domain/ReplayProbe.js"
import { fingerprintRequest, recordableRequest } from "../../domain/RequestFingerprint.js"
import { SUMMARISER_BLOCK } from "../../programs/turn/Compact.js"
import { generateThenOf, Llm } from "../../services/Llm.js"
import { currentReplay, type ReplaySession } from "../../services/Replaying.js"

const decodeFailure = onFirstCall(() => Schema.decodeUnknownEither(Schema.Union(LlmError, BudgetExceeded)))

const responseOf = (step: ThoughtStep): LlmResponse => ({
  model: step.model,
  provider: step.provider,
  tier: step.tier,
  failedAttempts: step.failed_attempts,
  text: step.text,
  toolCalls: step.tool_calls,
  usage: { input: step.prompt_tokens, output: step.response_tokens, cached: step.cached_tokens },
  finishReason: step.finish_reason,
  costUsd: step.cost_usd
})

const mismatchOf = (
  thought: number,
  step: ThoughtStep,
  request: LlmRequest,
  session: ReplaySession
): RequestMismatch | undefined => {
  const replayed = fingerprintRequest(request, session.fingerprinted)
  const recorded = step.request_hash
  const parts: Array<RequestMismatch["parts"][number]> = []
  // The tier asked for: the one that answered, unless it borrowed the other tier's provider.
  if (request.tier !== (step.requested_tier ?? step.tier)) parts.push("tier")
  if (recorded === undefined || recorded.system !== replayed.system) parts.push("system")
  if (recorded === undefined || recorded.messages !== replayed.messages) parts.push("messages")
  if (recorded === undefined || recorded.tools !== replayed.tools) parts.push("tools")
  if (parts.length === 0) return undefined
  return {
    thought,
    parts,
    recorded,
    replayed,
    recordedRequest: step.request,
    replayedRequest: recordableRequest(request)
  }
}

/**
 * The model of a replay: each Thought is answered with the recorded one, after the request is checked against
 * the recorded fingerprint (a difference goes to the probe; the recorded answer is still given, so the replay
 * goes on to show what follows). A recorded failure after the last Thought fails the same way; a Thought beyond
 * the recording fails as a bad response. The summary call that failed on entering the recorded turn (it left no
 * Thought) fails with the recorded error. No provider is called and nothing is spent.
 */
const replayed = (request: LlmRequest) =>
  Effect.flatMap(currentReplay, (session): Effect.Effect<LlmResponse, LlmError | BudgetExceeded> => {
    const { probe, recorded, thoughts } = session
    // The session's summary is the turn's first call: one that failed when recorded fails the same way.
    if (session.compactionFailure !== undefined && request.system[0]?.name === SUMMARISER_BLOCK) {
      const failure = decodeFailure(session.compactionFailure)
      session.compactionFailure = undefined
      return Effect.fail(
        Either.isRight(failure) ? failure.right : new LlmError({
          reason: "BadResponse",
          provider: "replay",
          message: "the recorded failure of the summary call cannot be read"
        })
      )
    }
    const index = session.nextThought++
    const step = thoughts[index]
    if (step === undefined) {
      const failure = recorded.metadata.error === undefined ? undefined : decodeFailure(recorded.metadata.error)
      if (index === thoughts.length && failure !== undefined && Either.isRight(failure)) {
        return Effect.fail(failure.right)
      }
      probe.extraThoughts++
      return Effect.fail(
        new LlmError({
          reason: "BadResponse",
          provider: "replay",
          message: `the recording has ${thoughts.length} Thoughts; the replay asked for Thought ${index + 1}`
        })
      )
    }
    const mismatch = mismatchOf(index, step, request, session)
    if (mismatch !== undefined) probe.requests.push(mismatch)
    return Effect.succeed(responseOf(step))
  })

/** The model of a replay, as above. */
export const LlmReplay = Layer.succeed(
  Llm,
  Llm.of({
    generate: replayed,
    generateThen: generateThenOf(replayed),
    providers: [],
    health: Effect.succeed([])
  })
)
