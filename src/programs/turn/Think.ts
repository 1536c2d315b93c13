import { type Clock, Data, Effect } from "effect"
import type { BudgetExceeded, LlmError } from "../../domain/Errors.js"
import type { ThoughtStep } from "../../domain/ExecutionTrace.js"
import type { LlmRequest, LlmResponse } from "../../domain/LlmTypes.js"
import { fingerprintRequest, recordableRequest, type RequestFingerprint } from "../../domain/RequestFingerprint.js"
import { Llm } from "../../services/Llm.js"
import { failureOf } from "../Failure.js"
import { type StepRuntime, withStepService } from "../Services.js"

export type Thought = Data.TaggedEnum<{
  Answered: { readonly step: ThoughtStep; readonly response: LlmResponse }
  Failed: { readonly error: LlmError | BudgetExceeded }
}>
export const Thought = Data.taggedEnum<Thought>()

/**
 * When a Thought's request is fingerprinted: `now`, into its step; `later`, by whoever records the step (the turn
 * fingerprints its own Thoughts when it makes its trace, see `TurnState.thought`).
 */
export type Fingerprint = "now" | "later"

/**
 * The fingerprint of a step whose fingerprint is taken `later`, until it is: one shared value in its place, so that
 * the step keeps the trace's order of fields and gets its fingerprint by a plain copy.
 */
export const fingerprintPending: RequestFingerprint = Object.freeze({
  system: "",
  messages: "",
  message_count: -1,
  tools: ""
})

const thoughtStep = (
  response: LlmResponse,
  wallMs: number,
  request: LlmRequest,
  recordRequest: boolean,
  fingerprint: Fingerprint
): ThoughtStep =>
  request.tier === response.tier && !recordRequest
    // The common step as a literal of its own fields: one with spreads has room for two more, and every Thought of
    // an open conversation holds its step.
    ? {
      kind: "thought",
      model: response.model,
      provider: response.provider,
      tier: response.tier,
      prompt_tokens: response.usage.input,
      cached_tokens: response.usage.cached,
      response_tokens: response.usage.output,
      finish_reason: response.finishReason,
      text: response.text,
      tool_call: response.toolCalls[0] ?? null,
      tool_calls: response.toolCalls,
      cost_usd: response.costUsd,
      wall_ms: wallMs,
      failed_attempts: response.failedAttempts,
      request_hash: fingerprint === "now" ? fingerprintRequest(request) : fingerprintPending
    }
    : anyThoughtStep(response, wallMs, request, recordRequest, fingerprint)

/**
 * The step with its request's fingerprint: the common step (no borrowed tier, no recorded request) as a literal of
 * its own fields, since a spread of it is copied through V8's slow path; any other by a spread, in the same order.
 */
export const withRequestHash = (step: ThoughtStep, requestHash: RequestFingerprint): ThoughtStep =>
  !("requested_tier" in step) && !("request" in step)
    ? {
      kind: "thought",
      model: step.model,
      provider: step.provider,
      tier: step.tier,
      prompt_tokens: step.prompt_tokens,
      cached_tokens: step.cached_tokens,
      response_tokens: step.response_tokens,
      finish_reason: step.finish_reason,
      text: step.text,
      tool_call: step.tool_call,
      tool_calls: step.tool_calls,
      cost_usd: step.cost_usd,
      wall_ms: step.wall_ms,
      failed_attempts: step.failed_attempts,
      request_hash: requestHash
    }
    : { ...step, request_hash: requestHash }

const anyThoughtStep = (
  response: LlmResponse,
  wallMs: number,
  request: LlmRequest,
  recordRequest: boolean,
  fingerprint: Fingerprint
): ThoughtStep => ({
  kind: "thought",
  model: response.model,
  provider: response.provider,
  tier: response.tier,
  ...(request.tier === response.tier ? {} : { requested_tier: request.tier }),
  prompt_tokens: response.usage.input,
  cached_tokens: response.usage.cached,
  response_tokens: response.usage.output,
  finish_reason: response.finishReason,
  text: response.text,
  tool_call: response.toolCalls[0] ?? null,
  tool_calls: response.toolCalls,
  cost_usd: response.costUsd,
  wall_ms: wallMs,
  failed_attempts: response.failedAttempts,
  request_hash: fingerprint === "now" ? fingerprintRequest(request) : fingerprintPending,
  ...(recordRequest ? { request: recordableRequest(request) } : {})
})

/**
 * Told of an answer as soon as the Llm service returns it, before anything else runs (nothing can interrupt it).
 * An object with a method rather than a function: the turn is its own recorder, and a step makes no closure for it.
 */
export interface OnAnswered {
  answered(answered: Thought & { readonly _tag: "Answered" }): void
}

/**
 * One LLM call on the request's tier (the Llm layer times out, retries and fails over within the tier, and
 * reserves and settles its cost in the day's budget): the ThoughtStep, with the request's fingerprint unless it is
 * taken `later` (and the request itself when `recordRequest`), or why there is none. One chain of effects, no
 * generator; the model, the clock and the tracer read in one operation: it runs for every Thought. The span and its
 * GenAI attributes only when a tracer exports them. `onAnswered` records a paid answer in the same handler that
 * received it: no interruption can come between them, and no region is needed for that.
 */
export const think = (
  request: LlmRequest,
  recordRequest = false,
  fingerprint: Fingerprint = "now",
  onAnswered?: OnAnswered
): Effect.Effect<Thought, never, Llm> =>
  withStepService(Llm, (llm, runtime) => thinkWith(llm, runtime, request, recordRequest, fingerprint, onAnswered))

/**
 * `think` with the Llm service, the clock and the tracer's verdict already read: a turn reads them once, when it
 * opens, rather than once per Thought (an operation each time). Made where it runs: without spans, the call is
 * timed from when it is made.
 */
export const thinkWith = (
  llm: Llm["Type"],
  { clock, traced }: StepRuntime,
  request: LlmRequest,
  recordRequest = false,
  fingerprint: Fingerprint = "now",
  onAnswered?: OnAnswered
): Effect.Effect<Thought> =>
  traced
    ? Effect.withSpan(
      Effect.zipRight(
        Effect.annotateCurrentSpan({ "gen_ai.operation.name": "chat", "myclaw.tier": request.tier }),
        Effect.suspend(() => call(llm, clock, request, recordRequest, fingerprint, true, onAnswered, succeed))
      ),
      "Turn.thought"
    )
    : call(llm, clock, request, recordRequest, fingerprint, false, onAnswered, succeed)

const succeed = (thought: Thought): Effect.Effect<Thought> => Effect.succeed(thought)

/**
 * `thinkWith`, its Thought handed to `then` by the very handler that receives the call's outcome: a turn parked
 * on its model holds one frame less than with a `flatMap` after `thinkWith`, and each Thought is one operation
 * less. With spans, the same `flatMap`: the Thought's span ends before `then` runs.
 */
export const thinkThen = <A, E, R>(
  llm: Llm["Type"],
  runtime: StepRuntime,
  request: LlmRequest,
  recordRequest: boolean,
  fingerprint: Fingerprint,
  onAnswered: OnAnswered | undefined,
  then: (thought: Thought) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  runtime.traced
    ? Effect.flatMap(thinkWith(llm, runtime, request, recordRequest, fingerprint, onAnswered), then)
    : call(llm, runtime.clock, request, recordRequest, fingerprint, false, onAnswered, then)

/**
 * The call and its Thought, timed from now, handed to `then`; with `traced`, the outcome's attributes on the
 * current span first.
 */
const call = <A, E, R>(
  llm: Llm["Type"],
  clock: Clock.Clock,
  request: LlmRequest,
  recordRequest: boolean,
  fingerprint: Fingerprint,
  traced: boolean,
  onAnswered: OnAnswered | undefined,
  then: (thought: Thought) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> => {
  const started = clock.unsafeCurrentTimeMillis()
  // The outcome is received by the Llm's own handler, and the failure told from the cause here: a turn parked on
  // its model holds this one closure for the call, not a handler of its own.
  return llm.generateThen(request, (outcome): Effect.Effect<A, E, R> => {
    if (outcome._tag === "Failure") {
      const failure = failureOf(outcome.cause)
      if (failure._tag === "Unexpected") return Effect.failCause(failure.cause)
      const error = failure.error
      const failed = Thought.Failed({ error })
      return traced
        ? Effect.zipRight(
          Effect.annotateCurrentSpan({ "error.type": error._tag === "LlmError" ? error.reason : error._tag }),
          then(failed)
        )
        : then(failed)
    }
    const response = outcome.value
    const answered = Thought.Answered({
      step: thoughtStep(response, clock.unsafeCurrentTimeMillis() - started, request, recordRequest, fingerprint),
      response
    })
    if (onAnswered !== undefined) onAnswered.answered(answered)
    return traced
      ? Effect.zipRight(Effect.annotateCurrentSpan(responseAttributes(response)), then(answered))
      : then(answered)
  })
}

/** The GenAI attributes of an answered call, on its Thought span. */
const responseAttributes = (response: LlmResponse) => ({
  "gen_ai.provider.name": response.provider.split(":")[0]!,
  "gen_ai.request.model": response.model,
  "gen_ai.response.model": response.model,
  "gen_ai.usage.input_tokens": response.usage.input,
  "gen_ai.usage.output_tokens": response.usage.output,
  "gen_ai.usage.cached_input_tokens": response.usage.cached,
  "gen_ai.response.finish_reasons": [response.finishReason],
  "myclaw.tier": response.tier,
  "myclaw.cost_usd": response.costUsd
})

/** A summary's text from the Thought that wrote it, or why there is none (a failed call, an empty answer). */
export const summaryOf = (thought: Thought): { readonly written: string; readonly failure: string | null } => {
  const written = thought._tag === "Answered" ? thought.response.text.trim() : ""
  const failure = thought._tag === "Failed"
    ? thought.error._tag === "LlmError" ? thought.error.message : "the budget refused the call"
    : written === ""
    ? "the summary came back empty"
    : null
  return { written, failure }
}
