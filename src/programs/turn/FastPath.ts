import { Clock, Data, Effect, Either, Option } from "effect"
import { type CachedPlan, normaliseRequest, planSignature, signatureChange } from "../../domain/CachedPlan.js"
import type { ActionStep, Outcome } from "../../domain/ExecutionTrace.js"
import { resolveArgs, type StepOutput } from "../../domain/Plan.js"
import { extractPlan } from "../../domain/PlanExtraction.js"
import { validatePlan } from "../../domain/PlanValidation.js"
import type { ToolCall } from "../../domain/ToolCall.js"
import type { TurnInput } from "../../services/AgentRuntime.js"
import { MyclawConfig } from "../../services/MyclawConfig.js"
import { PlanCache } from "../../services/PlanCache.js"
import { ToolRegistry } from "../../services/ToolRegistry.js"
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

/** The cached plan for this very request, with its signatures and validation checked; or why there is none. */
const findPlan = (request: string) =>
  Effect.gen(function*() {
    const { config } = yield* MyclawConfig
    if (!config.plans.enabled) return Either.left("plans are off (plans.enabled in myclaw.json)")
    const registry = yield* ToolRegistry
    const found = yield* Effect.either((yield* PlanCache).lookup(request))
    if (Either.isLeft(found)) return Either.left(`the plan cache is unavailable (${found.left.message})`)
    if (Option.isNone(found.right)) return Either.left("no cached plan for this request")
    const cached = found.right.value
    const changed = signatureChange(cached, registry.find)
    if (changed !== undefined) return Either.left(`cached plan ${cached.id} not reused: ${changed}`)
    const problems = validatePlan(cached.plan, registry.find, config.maxSteps)
    if (problems.length > 0) {
      return Either.left(`cached plan ${cached.id} no longer validates: ${problems.join("; ")}`)
    }
    return Either.right(cached)
  })

/**
 * Runs a cached plan step by step through the turn's own `act`, so each call passes exactly the gates a fresh
 * call passes (validation, policy, approval with taint, the write-ahead audit record); references resolve from
 * the results of this run only. The answer comes from the plan's template, or from one local-fast call.
 */
export const runPlan = <E, R>(cached: CachedPlan, traceId: string, ops: TurnOps<E, R>, recordRequests: boolean) =>
  Effect.gen(function*() {
    const registry = yield* ToolRegistry
    const outputs: Array<StepOutput> = []
    for (const [i, step] of cached.plan.steps.entries()) {
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
    if (cached.answer.kind === "template") {
      const text = resolveArgs(cached.answer.text, cached.plan.steps.length + 1, outputs)
      return Either.isRight(text) && typeof text.right === "string"
        ? FastPath.Served({ outcome: "success", response: text.right })
        : FastPath.Fallback({ reason: `cached plan ${cached.id}: its answer template could not be filled` })
    }
    const state = yield* ops.state
    const request = { tier: cached.answer.tier, system: state.system, messages: state.messages, tools: [] } as const
    const thought = yield* think(request, recordRequests)
    if (thought._tag === "Failed") {
      return FastPath.Fallback({
        reason: `cached plan ${cached.id}: the ${cached.answer.tier} answer failed (${thought.error.message})`
      })
    }
    yield* ops.update((current) => TurnState.thought(current, thought.step, thought.response))
    return FastPath.Served({ outcome: "success", response: thought.response.text })
  })

/** The fast path for a turn: its plan run when one is cached for the request and still holds, else why not. */
export const fastPath = <E, R>(input: TurnInput, traceId: string, ops: TurnOps<E, R>) =>
  Effect.gen(function*() {
    const request = normaliseRequest(input.userMessage)
    const found = yield* findPlan(request)
    if (Either.isLeft(found)) return FastPath.Fallback({ reason: found.left })
    const cached = found.right
    const { config } = yield* MyclawConfig
    yield* ops.update((state) =>
      TurnState.routed(state, "fast", `cached plan ${cached.id} (served ${cached.successes} time(s) before)`)
    )
    const result = yield* runPlan(cached, traceId, ops, config.traces.recordRequests)
    const succeeded = result._tag === "Served" && result.outcome === "success"
    if (result._tag === "Fallback" || succeeded) {
      yield* (yield* PlanCache).used(cached.id, succeeded, yield* Clock.currentTimeMillis).pipe(
        Effect.catchAll((error) => Effect.logWarning(`plan ${cached.id}: its use was not counted: ${error.message}`))
      )
    }
    return result
  })

/** After a successful ReAct turn: its tool calls as a plan for the same request next time, when they make one. */
export const rememberPlan = (state: TurnState.TurnState) =>
  Effect.gen(function*() {
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
