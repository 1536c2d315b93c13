import { Cause, Clock, Context, Duration, Effect, Effectable, Exit, Schedule } from "effect"
import type { AppConfig, ModelPrice } from "../../domain/AppConfig.js"
import { type BudgetExceeded, budgetExceededMessage, isTransient, LlmError, llmTimeout } from "../../domain/Errors.js"
import type { FailedAttempt, Tier } from "../../domain/ExecutionTrace.js"
import type { LlmRequest, LlmResponse } from "../../domain/LlmTypes.js"
import { withShippedPrices } from "../../domain/ShippedPrices.js"
import { failureOf } from "../../programs/Failure.js"
import { type Restore, uninterruptibleRegion } from "../../programs/Regions.js"
import { timeoutFail } from "../../programs/Timeout.js"
import type { Budget } from "../../services/Budget.js"
import { Llm, type LlmOutcome, type ProviderHealth } from "../../services/Llm.js"
import { makePricing, type Pricing } from "./Pricing.js"
import type { Provider, ProviderResponse } from "./Provider.js"

export type TierProviders = Readonly<Record<Tier, ReadonlyArray<Provider>>>

export interface TierSettings {
  readonly pricing: Readonly<Record<string, ModelPrice>>
  /** Each attempt's timeout. */
  readonly timeoutMs: number
  /** Retries per provider on a transient failure, with exponential backoff and jitter from `baseDelayMs`. */
  readonly retries: { readonly max: number; readonly baseDelayMs: number }
  /** Named in the error when no provider is configured. */
  readonly configFile: string
}

export const tierSettings = (config: AppConfig, configFile: string): TierSettings => ({
  pricing: withShippedPrices(config.pricing),
  timeoutMs: config.timeouts.llmMs,
  retries: config.retries,
  configFile
})

/** When neither the request nor the provider says: what a reservation assumes the answer may cost. */
const DEFAULT_MAX_OUTPUT = 4096

/** A generous count of the prompt's tokens (3 characters a token), for reservations only. */
export const estimateInputTokens = (request: LlmRequest): number => {
  let chars = 0
  for (const block of request.system) chars += block.text.length
  for (const message of request.messages) {
    chars += message.content.length
    if (message.role === "assistant") {
      for (const call of message.toolCalls) chars += JSON.stringify(call.args ?? "").length
    }
  }
  for (const tool of request.tools) chars += tool.description.length + JSON.stringify(tool.parameters).length
  return Math.ceil(chars / 3)
}

/** Cool-downs after consecutive failures: 30 s, then 1 min, then 5 min. */
const COOLDOWNS_MS = [30_000, 60_000, 300_000]
/** A retry-after longer than this moves on to the next provider instead of waiting. */
const MAX_WAIT_MS = 60_000

const retryAfter = (error: LlmError | BudgetExceeded): number => error._tag === "LlmError" ? error.retryAfterMs ?? 0 : 0

/** Worth another try on the same provider: a transient failure whose retry-after is at most MAX_WAIT_MS. */
const retryable = (error: LlmError | BudgetExceeded): boolean =>
  error._tag === "LlmError" && isTransient(error) && retryAfter(error) <= MAX_WAIT_MS

/**
 * The retries of one provider: `max` at most, each after an exponential backoff from `baseDelayMs` (x0.8 to
 * x1.2 jitter) or the provider's retry-after when that is longer, never longer than MAX_WAIT_MS.
 */
const retrySchedule = (retries: TierSettings["retries"]) =>
  Schedule.exponential(Duration.millis(retries.baseDelayMs)).pipe(
    Schedule.jitteredWith({ min: 0.8, max: 1.2 }),
    Schedule.intersect(Schedule.recurs(retries.max)),
    Schedule.intersect(
      Schedule.addDelay(Schedule.identity<LlmError | BudgetExceeded>(), (error) => Duration.millis(retryAfter(error)))
    ),
    Schedule.whileInput(retryable),
    Schedule.modifyDelay((_, delay) => Duration.min(delay, Duration.millis(MAX_WAIT_MS)))
  )

const otherTier: Record<Tier, Tier> = { frontier: "local-fast", "local-fast": "frontier" }

/**
 * Attempts that first reserve their maximum cost in `budget`. Every reservation ends: settled at the real cost,
 * at 0 when the call failed or was never sent, and at its maximum when the call was interrupted in flight (the
 * provider may have billed it). The reservation, the outcome's handling and the settling are one uninterruptible
 * region; the call alone is given back the caller's interruptibility. Each part is an object of the attempt's
 * fields whose `commit` makes it as it runs: a call parked in flight holds the attempt (the tier's handler keeps
 * it), the region and the handler of the call's outcome, each with what it was opened with, and no closure made
 * to open them.
 */
const budgetedAttempts = (
  budget: Budget["Type"],
  pricing: Pricing,
  call: (p: Provider, request: LlmRequest) => Effect.Effect<ProviderResponse, LlmError>
) => {
  class Attempt extends Effectable.Class<ProviderResponse, LlmError | BudgetExceeded> {
    sent = false
    constructor(readonly p: Provider, readonly request: LlmRequest) {
      super()
    }

    commit() {
      return uninterruptibleRegion((restore) => new Reserved(this, restore))
    }
  }

  /** The attempt's region: its cost reserved, its call made, its outcome settled. */
  class Reserved extends Effectable.Class<ProviderResponse, LlmError | BudgetExceeded> {
    constructor(readonly attempt: Attempt, readonly restore: Restore) {
      super()
    }

    commit() {
      const { attempt } = this
      const { p, request } = attempt
      const priced = pricing.priceOf(p.model) !== undefined
      return Effect.flatMap(
        budget.reserve({
          model: p.model,
          inputTokens: priced ? estimateInputTokens(request) : 0,
          maxOutputTokens: request.maxTokens ?? p.maxOutputTokens ?? DEFAULT_MAX_OUTPUT
        }),
        // Already uninterruptible here: the outcome is handled in this region (`Effect.onExit` would open
        // another), by one handler.
        (reservation) =>
          Effect.matchCauseEffect(this.restore(new Sending(attempt)), {
            onSuccess: (response) => {
              const settled = Effect.as(
                budget.settle(reservation, pricing.usd(response.model, response.usage)),
                response
              )
              const warning = pricing.unpricedWarning(response.model, response.usage)
              return warning === undefined ? settled : Effect.zipRight(warning, settled)
            },
            onFailure: (cause) =>
              Effect.zipRight(
                attempt.sent && Cause.isInterrupted(cause)
                  ? budget.abandon(reservation)
                  : budget.settle(reservation, 0),
                Effect.failCause(cause)
              )
          })
      )
    }
  }

  /** The attempt's call, made once its cost is reserved: the attempt is sent as it starts. */
  class Sending extends Effectable.Class<ProviderResponse, LlmError> {
    constructor(readonly attempt: Attempt) {
      super()
    }

    commit() {
      this.attempt.sent = true
      return call(this.attempt.p, this.attempt.request)
    }
  }

  return (p: Provider, request: LlmRequest): Effect.Effect<ProviderResponse, LlmError | BudgetExceeded> =>
    new Attempt(p, request)
}

/** A call's outcome as the effect it is: what `generate` hands it to. */
const handOn = (outcome: LlmOutcome): Effect.Effect<LlmResponse, LlmError | BudgetExceeded> => outcome

/** The failed attempts of every answer that came at the first try: one array for all of them, never written. */
const noFailures: ReadonlyArray<FailedAttempt> = Object.freeze([])

interface State {
  failures: number
  cooldownUntil: number
  lastSuccessAt: number | null
  lastError: ProviderHealth["lastError"]
}

/**
 * One model call on a tier, as its providers are tried: what failed so far (the shared empty array until the
 * first failure), the last provider error and the budget's first refusal; what its outcome is handed to.
 */
class TierCall<A, E, R> {
  failed: ReadonlyArray<FailedAttempt> = noFailures
  last: LlmError | undefined = undefined
  refused: BudgetExceeded | undefined = undefined
  constructor(
    readonly order: ReadonlyArray<Provider>,
    readonly request: LlmRequest,
    readonly tier: Tier,
    readonly clock: Clock.Clock,
    readonly then: (outcome: LlmOutcome) => Effect.Effect<A, E, R>
  ) {}

  record(p: Provider, error: LlmError | BudgetExceeded): void {
    const attempt: FailedAttempt = error._tag === "BudgetExceeded"
      ? { provider: p.name, reason: error._tag, message: budgetExceededMessage(error) }
      : { provider: p.name, reason: error.reason, message: error.message }
    this.failed = this.failed === noFailures ? [attempt] : [...this.failed, attempt]
  }
}

/** The Llm of the tiers, failing with `Err`: without a budget, nothing refuses a call. */
export type TiersLlm<Err> = Omit<Llm["Type"], "generate" | "generateThen"> & {
  readonly generate: (request: LlmRequest) => Effect.Effect<LlmResponse, Err>
  readonly generateThen: <A, E, R>(
    request: LlmRequest,
    then: (outcome: LlmOutcome<Err>) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E, R>
}

/**
 * The Llm service over configured tiers. Within a tier, each provider gets a timeout per attempt and
 * retries with backoff (honouring retry-after) on transient failures, then the next provider is tried; other
 * failures (auth, bad request) end the call at once with the provider's error. A provider that failed is
 * cooled down before it is tried first again. A tier with no provider borrows the other tier's. With a
 * budget, a call the budget refuses fails with its `BudgetExceeded` once no provider of the tier fits.
 */
export function makeLlmTiers(tiers: TierProviders, settings: TierSettings): TiersLlm<LlmError>
export function makeLlmTiers(tiers: TierProviders, settings: TierSettings, budget: Budget["Type"]): Llm["Type"]
export function makeLlmTiers(tiers: TierProviders, settings: TierSettings, budget?: Budget["Type"]): Llm["Type"] {
  const pricing = makePricing(settings.pricing)
  const states = new Map<Provider, State>()
  const entries = (["frontier", "local-fast"] as const).flatMap((tier) => tiers[tier].map((p) => ({ tier, p })))
  for (const { p } of entries) states.set(p, { failures: 0, cooldownUntil: 0, lastSuccessAt: null, lastError: null })
  const stateOf = (p: Provider) => states.get(p)!
  const retries = retrySchedule(settings.retries)

  const call = (p: Provider, request: LlmRequest) =>
    p.selfTimed === true
      ? p.generate(request, settings.timeoutMs)
      : timeoutFail(p.generate(request, settings.timeoutMs), settings.timeoutMs, () =>
        llmTimeout(p.name, settings.timeoutMs))

  /** With a budget, each attempt first reserves its maximum cost and settles the real one after. */
  const attemptOnce = budget === undefined ? call : budgetedAttempts(budget, pricing, call)

  /**
   * The retries of one provider after its first failure: the retry schedule starts there (its first input is
   * that failure, as if it had run from the start), and every failed attempt is recorded.
   */
  const retried = <A, E, R>(p: Provider, call: TierCall<A, E, R>, first: LlmError | BudgetExceeded) => {
    const attempt = Effect.tapError(attemptOnce(p, call.request), (error) => Effect.sync(() => call.record(p, error)))
    let replayed = false
    return Effect.retry(
      Effect.suspend(() => {
        if (replayed) return attempt
        replayed = true
        return Effect.fail(first)
      }),
      retries
    )
  }

  const recordFailure = (p: Provider, error: LlmError) =>
    Effect.map(Clock.currentTimeMillis, (now) => {
      const state = stateOf(p)
      state.lastError = { reason: error.reason, message: error.message, at: now }
      if (isTransient(error)) {
        state.cooldownUntil = now + COOLDOWNS_MS[Math.min(state.failures, COOLDOWNS_MS.length - 1)]!
        state.failures++
      }
    })

  /**
   * The answer of `p`, which clears its failures, handed on here: the caller receives it in this handler, before
   * any warning is logged (its continuation runs after them).
   */
  const answered = <A, E, R>(call: TierCall<A, E, R>, p: Provider, response: ProviderResponse) => {
    const state = stateOf(p)
    state.failures = 0
    state.cooldownUntil = 0
    state.lastSuccessAt = call.clock.unsafeCurrentTimeMillis()
    const failed = call.failed
    // Field by field: on V8 11 (Node 20) a literal that adds keys after a leading spread gives each object a
    // hidden class of its own, about a microsecond per added key.
    const answer: LlmResponse = {
      model: response.model,
      provider: p.name,
      tier: call.tier,
      failedAttempts: failed,
      text: response.text,
      toolCalls: response.toolCalls,
      usage: response.usage,
      finishReason: response.finishReason,
      costUsd: pricing.usd(response.model, response.usage)
    }
    const handed = call.then(Exit.succeed(answer))
    const warning = pricing.unpricedWarning(response.model, response.usage)
    const done = failed.length === 0
      ? handed
      : Effect.zipRight(Effect.logWarning(`${p.name} answered after ${failed.length} failed attempts`), handed)
    return warning === undefined ? done : Effect.zipRight(warning, done)
  }

  /** No provider answered. Only when none was called at all is the budget the reason the call failed. */
  const exhausted = <A, E, R>(call: TierCall<A, E, R>): LlmOutcome => {
    const { failed, last } = call
    return last === undefined ? Exit.fail(call.refused!) : Exit.fail(
      new LlmError({
        reason: last.reason,
        provider: last.provider,
        message: failed.length > 1 ? `${last.message} (after ${failed.length} attempts)` : last.message,
        attempts: failed,
        ...(last.status === undefined ? {} : { status: last.status })
      })
    )
  }

  /**
   * The providers of the tier from the `i`th, as one chain of effects (it runs for every model call): the first
   * that answers wins; a provider is retried on transient failures first; a refusal by the budget moves on to
   * the next (it is about that provider's price, not its health); a failure is recorded and, when transient,
   * moves on too. A call answered at the first try waits behind one handler here (a parked call holds its frames).
   */
  const from = <A, E, R>(call: TierCall<A, E, R>, i: number): Effect.Effect<A, E, R> => {
    if (i === call.order.length) return call.then(exhausted(call))
    const p = call.order[i]!
    // The failure told from the cause here: this frame is what a call parked in flight holds (`matchEffect` would
    // keep two more closures and an object), and what comes after a failure is made only once there is one.
    return Effect.matchCauseEffect(attemptOnce(p, call.request), {
      onSuccess: (response) => answered(call, p, response),
      onFailure: (cause) => {
        const failure = failureOf(cause)
        if (failure._tag === "Unexpected") return call.then(Exit.failCause(failure.cause))
        const first = failure.error
        call.record(p, first)
        return retryable(first)
          ? Effect.matchCauseEffect(retried(p, call, first), {
            onSuccess: (response) => answered(call, p, response),
            onFailure: (cause) => {
              const retry = failureOf(cause)
              return retry._tag === "Unexpected"
                ? call.then(Exit.failCause(retry.cause))
                : afterFailure(call, i, p, retry.error)
            }
          })
          : afterFailure(call, i, p, first)
      }
    })
  }

  /** After the `i`th provider failed for good: the next one, or the call's failure. */
  const afterFailure = <A, E, R>(
    call: TierCall<A, E, R>,
    i: number,
    p: Provider,
    error: LlmError | BudgetExceeded
  ): Effect.Effect<A, E, R> => {
    if (error._tag === "BudgetExceeded") {
      call.refused ??= error
      return from(call, i + 1)
    }
    call.last = error
    return Effect.zipRight(
      recordFailure(p, error),
      Effect.suspend(() => isTransient(error) ? from(call, i + 1) : call.then(exhausted(call)))
    )
  }

  // The fiber's clock read in the call's one operation: `Effect.clockWith` would make two more closures, which a
  // call parked in flight would keep.
  const inTier = <A, E, R>(
    list: ReadonlyArray<Provider>,
    request: LlmRequest,
    tier: Tier,
    then: (outcome: LlmOutcome) => Effect.Effect<A, E, R>
  ) =>
    Effect.withFiberRuntime<A, E, R>((fiber) => {
      const clock = Context.get(fiber.currentDefaultServices, Clock.Clock)
      const now = clock.unsafeCurrentTimeMillis()
      // Mostly every provider is ready: the tier's own list, in its order (a parked call holds no copy of it).
      const order = list.every((p) => stateOf(p).cooldownUntil <= now) ? list : [
        ...list.filter((p) => stateOf(p).cooldownUntil <= now),
        ...list.filter((p) => stateOf(p).cooldownUntil > now)
          .sort((a, b) => stateOf(a).cooldownUntil - stateOf(b).cooldownUntil)
      ]
      return from(new TierCall(order, request, tier, clock, then), 0)
    })

  const generateThen = <A, E, R>(
    request: LlmRequest,
    then: (outcome: LlmOutcome) => Effect.Effect<A, E, R>
  ): Effect.Effect<A, E, R> => {
    const own = tiers[request.tier]
    if (own.length > 0) return inTier(own, request, request.tier, then)
    const borrowed = otherTier[request.tier]
    if (tiers[borrowed].length > 0) return inTier(tiers[borrowed], request, borrowed, then)
    return Effect.suspend(() =>
      then(Exit.fail(
        new LlmError({
          reason: "NotConfigured",
          provider: "none",
          message: `no LLM provider is configured: add one under "tiers" in ${settings.configFile}`
        })
      ))
    )
  }

  const generate = (request: LlmRequest): Effect.Effect<LlmResponse, LlmError | BudgetExceeded> =>
    generateThen(request, handOn)

  const health = Effect.sync((): ReadonlyArray<ProviderHealth> =>
    entries.map(({ p, tier }) => {
      const state = stateOf(p)
      return {
        tier,
        provider: p.name,
        model: p.model,
        lastSuccessAt: state.lastSuccessAt,
        lastError: state.lastError,
        cooldownUntil: state.cooldownUntil > 0 ? state.cooldownUntil : null
      }
    })
  )

  return Llm.of({
    generate,
    generateThen,
    providers: entries.map(({ p, tier }) => ({ tier, provider: p.name, model: p.model })),
    health
  })
}
