import { Clock, Data, Effect, Either, Option } from "effect"
import { generalise, similarity } from "../../domain/Autopath.js"
import {
  type CachedPlan,
  normaliseRequest,
  type PlanAnswer,
  planSignature,
  signatureChange
} from "../../domain/CachedPlan.js"
import type { ActionStep, Outcome } from "../../domain/ExecutionTrace.js"
import { type Plan, resolveArgs, type StepOutput } from "../../domain/Plan.js"
import { extractPlan } from "../../domain/PlanExtraction.js"
import { validatePlan } from "../../domain/PlanValidation.js"
import type { ToolCall } from "../../domain/ToolCall.js"
import type { TurnInput } from "../../services/AgentRuntime.js"
import { MyclawConfig } from "../../services/MyclawConfig.js"
import { PlanCache } from "../../services/PlanCache.js"
import { ToolRegistry } from "../../services/ToolRegistry.js"
import { answerText } from "./Messages.js"
import { think } from "./Think.js"
import * as TurnState from "./TurnState.js"

/** What the fast path did: served the turn (or ended it, as a gate ends a fresh call), or why it did not. */
export type FastPath = Data.TaggedEnum<{
  Served: { readonly outcome: Outcome; readonly response: string | null }
  Fallback: { readonly reason: string }
}>
export const FastPath = Data.taggedEnum<FastPath>()

/** What the turn lends the fast path: its own `act` (every gate, then the run, recorded), its state. */
export interface TurnOps<E, R> {
  readonly act: (
    calls: ReadonlyArray<ToolCall>
  ) => Effect.Effect<
    { readonly _tag: "Continue" } | {
      readonly _tag: "End"
      readonly outcome: Outcome
      readonly response: string | null
    },
    E,
    R
  >
  readonly state: Effect.Effect<TurnState.TurnState>
  readonly update: (f: (state: TurnState.TurnState) => TurnState.TurnState) => Effect.Effect<void>
}

const lastAction = (state: TurnState.TurnState): ActionStep | undefined =>
  [...state.steps].reverse().find((step): step is ActionStep => step.kind === "action")

/** The plan a turn runs: a cached one as it is (fast), or generalised to a similar request (auto). */
interface Chosen {
  readonly cached: CachedPlan
  readonly plan: Plan
  readonly answer: PlanAnswer
  readonly path: "fast" | "auto"
}

/** Why a plan may not run now: a tool changed since it was cached, or it no longer validates. */
const stale = Effect.fnUntraced(function*(cached: CachedPlan, plan: Plan) {
  const { config } = yield* MyclawConfig
  const registry = yield* ToolRegistry
  const changed = signatureChange(cached, registry.find)
  if (changed !== undefined) return `cached plan ${cached.id} not reused: ${changed}`
  const problems = validatePlan(plan, registry.find, config.maxSteps)
  return problems.length > 0 ? `cached plan ${cached.id} no longer validates: ${problems.join("; ")}` : undefined
})

/** A plan confirmed often enough whose request is similar to this one, generalised to it; or why there is none. */
const similarPlan = Effect.fnUntraced(function*(request: string, threshold: number) {
  const plans = yield* (yield* PlanCache).list
  const ranked = [...plans].sort((a, b) => similarity(b.request, request) - similarity(a.request, request))
  let why = "no cached plan is similar enough"
  for (const cached of ranked) {
    const generalised = generalise(cached, request, threshold)
    if (Either.isLeft(generalised)) {
      if (similarity(cached.request, request) >= threshold) why = generalised.left
      continue
    }
    const problem = yield* stale(cached, generalised.right.plan)
    if (problem !== undefined) {
      why = problem
      continue
    }
    return Either.right<Chosen>({ cached, ...generalised.right, path: "auto" })
  }
  return Either.left(why)
})

/** The cached plan for this request (or, with autopath, a similar one), checked; or why there is none. */
const findPlan = Effect.fnUntraced(function*(request: string) {
  const { config } = yield* MyclawConfig
  const cache = yield* PlanCache
  const found = yield* Effect.either(cache.lookup(request))
  if (Either.isLeft(found)) return Either.left(`the plan cache is unavailable (${found.left.message})`)
  if (Option.isNone(found.right)) {
    if (!config.plans.autopath) return Either.left("no cached plan for this request")
    const similar = yield* Effect.either(similarPlan(request, config.plans.similarity))
    if (Either.isLeft(similar)) return Either.left(`the plan cache is unavailable (${similar.left.message})`)
    return Either.mapLeft(similar.right, (why) => `no cached plan for this request; autopath: ${why}`)
  }
  const cached = found.right.value
  const problem = yield* stale(cached, cached.plan)
  if (problem !== undefined) return Either.left(problem)
  return Either.right<Chosen>({ cached, plan: cached.plan, answer: cached.answer, path: "fast" })
})

/**
 * Runs a cached plan step by step through the turn's own `act`, so each call passes exactly the gates a fresh
 * call passes (validation, policy, approval with taint, the write-ahead audit record); references resolve from
 * the results of this run only. The answer comes from the plan's template, or from one local-fast call.
 */
const runPlan = Effect.fnUntraced(function*<E, R>(
  chosen: Chosen,
  traceId: string,
  ops: TurnOps<E, R>,
  recordRequests: boolean
) {
  const { cached } = chosen
  const registry = yield* ToolRegistry
  const outputs: Array<StepOutput> = []
  for (const [i, step] of chosen.plan.steps.entries()) {
    const at = i + 1
    const args = resolveArgs(step.args, at, outputs)
    if (Either.isLeft(args)) return FastPath.Fallback({ reason: `cached plan ${cached.id} stopped: ${args.left}` })
    const call: ToolCall = { id: `${traceId}-plan-${at}`, name: step.tool, args: args.right }
    yield* ops.update((state) => TurnState.proposed(state, [call]))
    const next = yield* ops.act([call])
    if (next._tag === "End") return FastPath.Served({ outcome: next.outcome, response: next.response })
    const ran = lastAction(yield* ops.state)
    const tool = registry.find(step.tool)
    if (ran === undefined || tool === undefined || ran.validation !== "ok") {
      return FastPath.Fallback({
        reason: `cached plan ${cached.id} stopped: step ${at}: ${ran?.validation_error ?? "not valid"}`
      })
    }
    if (ran.exec_result === null || ran.exec_result.status === "failed") {
      return FastPath.Fallback({
        reason: `cached plan ${cached.id} stopped: step ${at} (${step.tool}) failed: ${ran.error ?? "no result"}`
      })
    }
    outputs.push({ tool, result: ran.exec_result })
  }
  const answer = chosen.answer
  if (answer.kind === "template") {
    const text = resolveArgs(answer.text, chosen.plan.steps.length + 1, outputs)
    return Either.isRight(text) && typeof text.right === "string"
      ? FastPath.Served({ outcome: "success", response: text.right })
      : FastPath.Fallback({ reason: `cached plan ${cached.id}: its answer template could not be filled` })
  }
  const state = yield* ops.state
  const request = { tier: answer.tier, system: state.system, messages: state.messages, tools: [] } as const
  const thought = yield* think(request, recordRequests)
  if (thought._tag === "Failed") {
    return FastPath.Fallback({
      reason: `cached plan ${cached.id}: the ${answer.tier} answer failed (${thought.error.message})`
    })
  }
  yield* ops.update((current) => TurnState.thought(current, thought.step, thought.response))
  return FastPath.Served({
    outcome: "success",
    response: answerText(thought.response.text, thought.response.finishReason)
  })
})

/**
 * The fast path for a turn: its plan run when one is cached for the request and still holds, else why not. With
 * plans off, nothing is looked up (nor the request normalised): every turn goes to the loop.
 */
export const fastPath = <E, R>(input: TurnInput, traceId: string, ops: TurnOps<E, R>) =>
  Effect.flatMap(
    MyclawConfig,
    ({ config }) =>
      config.plans.enabled
        ? fastPathOn(input, traceId, ops)
        : Effect.succeed(FastPath.Fallback({ reason: "plans are off (plans.enabled in myclaw.json)" }))
  )

const fastPathOn = Effect.fnUntraced(function*<E, R>(input: TurnInput, traceId: string, ops: TurnOps<E, R>) {
  const request = normaliseRequest(input.userMessage)
  const found = yield* findPlan(request)
  if (Either.isLeft(found)) return FastPath.Fallback({ reason: found.left })
  const chosen = found.right
  const { cached } = chosen
  const { config } = yield* MyclawConfig
  yield* ops.update((state) =>
    TurnState.routed(
      state,
      chosen.path,
      chosen.path === "fast"
        ? `cached plan ${cached.id} (served ${cached.successes} time(s) before)`
        : `cached plan ${cached.id} generalised from "${cached.request}" (served ${cached.successes} time(s))`
    )
  )
  const result = yield* runPlan(chosen, traceId, ops, config.traces.recordRequests)
  const succeeded = result._tag === "Served" && result.outcome === "success"
  // A generalised run is not counted against the plan of the request it came from.
  if (chosen.path === "fast" && (result._tag === "Fallback" || succeeded)) {
    yield* (yield* PlanCache).used(cached.id, succeeded, yield* Clock.currentTimeMillis).pipe(
      Effect.catchAll((error) => Effect.logWarning(`plan ${cached.id}: its use was not counted: ${error.message}`))
    )
  }
  return result
})

/** After a successful ReAct turn: its tool calls as a plan for the same request next time, when they make one. */
export const rememberPlan = Effect.fnUntraced(function*(state: TurnState.TurnState) {
  const { config } = yield* MyclawConfig
  if (!config.plans.enabled || state.route?.path !== "react" || state.end?.outcome !== "success") return
  const registry = yield* ToolRegistry
  const steps = state.steps.filter((step): step is ActionStep => step.kind === "action")
  const extracted = extractPlan(steps, state.end.response ?? "", registry.find)
  if (extracted === undefined) return
  if (validatePlan(extracted.plan, registry.find, config.maxSteps).length > 0) return
  yield* (yield* PlanCache).save({
    request: normaliseRequest(state.input.userMessage),
    plan: extracted.plan,
    signature: planSignature(extracted.plan, registry.find),
    answer: extracted.answer,
    source_trace: state.traceId
  }, yield* Clock.currentTimeMillis).pipe(
    Effect.catchAll((error) => Effect.logWarning(`the turn's plan was not kept: ${error.message}`))
  )
})
