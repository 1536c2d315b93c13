import { Cause, Context, Data, Effect, Effectable, Exit, Fiber, FiberRef, HashMap, Schema } from "effect"
import type { AppConfig } from "../../domain/AppConfig.js"
import { BudgetExceeded, LlmError } from "../../domain/Errors.js"
import type { ActionStep, Outcome } from "../../domain/ExecutionTrace.js"
import type { MessagesFold } from "../../domain/MessagesFold.js"
import { onFirstCall } from "../../domain/OnFirstCall.js"
import { ownWords } from "../../domain/Quoted.js"
import { messagesChars, type TokenCounting, tokenCountingOf } from "../../domain/Tokens.js"
import type { ToolCall } from "../../domain/ToolCall.js"
import type { TurnInput } from "../../services/AgentRuntime.js"
import { AuditLog } from "../../services/AuditLog.js"
import { Budget, type BudgetStatus } from "../../services/Budget.js"
import { DrawnIds, DrawnLog, IdGenerator } from "../../services/IdGenerator.js"
import { Llm } from "../../services/Llm.js"
import { MyclawConfig } from "../../services/MyclawConfig.js"
import { Policy } from "../../services/Policy.js"
import { PromptBuilder } from "../../services/PromptBuilder.js"
import { RunningTurns } from "../../services/RunningTurns.js"
import { ToolRegistry } from "../../services/ToolRegistry.js"
import { TraceSink } from "../../services/TraceSink.js"
import { type Restore, uninterruptibleRegion } from "../Regions.js"
import { decide, ruleCommand } from "../rules/Rules.js"
import { servicesAndRuntime, type StepRuntime } from "../Services.js"
import { withSpanWhenTraced } from "../Spans.js"
import { BudgetReadLog, recordingReads } from "./BudgetReads.js"
import { compactSession } from "./Compact.js"
import { compactTurn } from "./CompactTurn.js"
import { execute, type Executed, observe } from "./Execute.js"
import { fastPath, rememberPlan } from "./FastPath.js"
import { actionStep, Gate, type GateContext, gateWith, type Run } from "./Gate.js"
import {
  answerText,
  budgetHitMessage,
  budgetRefusedMessage,
  cutArgumentsHint,
  gateEnd,
  invalidStreakMessage,
  llmFailureMessage,
  softCapNotice,
  stepsExhaustedMessage,
  UNRECORDED,
  unrecordedMessage
} from "./Messages.js"
import { progressListener, type TurnProgress } from "./Progress.js"
import { provenanceOf } from "./Provenance.js"
import { type OnAnswered, thinkThen, type Thought } from "./Think.js"
import * as TurnState from "./TurnState.js"

type Next = Data.TaggedEnum<{
  Continue: {}
  End: { readonly outcome: Outcome; readonly response: string | null }
}>
const Next = Data.taggedEnum<Next>()

const encodeThoughtError = onFirstCall(() => Schema.encodeSync(Schema.Union(LlmError, BudgetExceeded)))
const interruptedMessage = "Stopped: the turn was interrupted before it finished."
const internalErrorMessage = "I could not finish this request because of an internal error; it is in the trace."

/**
 * One turn of the ReAct loop: Thought, then each tool call through the gates (validation, policy, approval, the
 * policy again at launch, the write-ahead audit record) and, when it passes, its execution; until an answer or
 * one of the other five outcomes. The turn's state is a value this program alone updates; a tool that ran is
 * recorded in the same uninterruptible region that ran it, and the trace is closed exactly once, whatever
 * happens, interruption included.
 */
export const runTurn = (input: TurnInput, hooks: TurnHooks = noHooks) =>
  withSpanWhenTraced("Turn.run")(turn(input, hooks))

/**
 * What a runtime runs around each turn (the active-turns gauge): inside the turn's own uninterruptible region,
 * `ended` once for every `started`, however the turn ends. A region of their own around the turn would stay open,
 * with its frames, for as long as the turn waits for its model.
 */
export interface TurnHooks {
  readonly started: (input: TurnInput) => Effect.Effect<void>
  readonly ended: (input: TurnInput) => Effect.Effect<void>
}

const noHooks: TurnHooks = { started: () => Effect.void, ended: () => Effect.void }

/**
 * The turn in one uninterruptible region, with its fiber-local settings: the ids it draws (prompt wrappers,
 * approvals, budget reservations, wherever they are drawn) go to its own log from the first one, the trace id;
 * once that is drawn its logs carry it and the session id. Both are put back when the turn ends, however it ends.
 * Only the loop is interruptible. One region where two `Effect.locally` would open two more, kept open while the
 * turn waits for its model: a parked conversation holds all of them. What it keeps of the region itself is what
 * the region opened with: an object of three fields.
 */
const turn = (input: TurnInput, hooks: TurnHooks) =>
  uninterruptibleRegion((restore) => new SettledTurn(input, hooks, restore))

/**
 * The turn between its setting up and its putting back, which runs however the turn ends: opened, its loop run
 * (the only interruptible part), its trace closed exactly once whatever happened in the loop, then left. A
 * combinator, not a generator: while the turn waits for its model, the fiber holds one handler here (the loop's),
 * not a suspended generator and its registers, nor a handler for the opening that is over: each handler holds the
 * effect it ran, and the turn's whole opening with it.
 */
const settledTurn = (input: TurnInput, hooks: TurnHooks, restore: Restore) =>
  Effect.flatMap(enterTurn(input, hooks), (entered) => {
    const left = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.matchCauseEffect(effect, {
        onSuccess: (value) => Effect.as(leaveTurn(input, hooks, entered), value),
        onFailure: (cause) => Effect.zipRight(leaveTurn(input, hooks, entered), Effect.failCause(cause))
      })
    return Effect.matchCauseEffect(openTurn(input, entered.annotationsBefore), {
      onFailure: (cause) => Effect.zipRight(leaveTurn(input, hooks, entered), Effect.failCause(cause)),
      onSuccess: (t) =>
        // Built inside the restored region: the region's frame keeps the effect it restored while the turn waits,
        // and an object that makes the loop when it runs is smaller than the loop's first steps already run.
        Effect.matchCauseEffect(restore(new Looping(t)), {
          onSuccess: (end) => left(finishTurn(t, entered.drawn, Exit.succeed(end))),
          onFailure: (cause) => left(finishTurn(t, entered.drawn, Exit.failCause(cause)))
        })
    })
  })

/** `settledTurn` as an effect of its own, run when it is run. */
class SettledTurn extends Effectable.Class<
  Effect.Effect.Success<ReturnType<typeof settledTurn>>,
  Effect.Effect.Error<ReturnType<typeof settledTurn>>,
  Effect.Effect.Context<ReturnType<typeof settledTurn>>
> {
  constructor(readonly input: TurnInput, readonly hooks: TurnHooks, readonly restore: Restore) {
    super()
  }

  commit() {
    return settledTurn(this.input, this.hooks, this.restore)
  }
}

interface Entered {
  readonly running: RunningTurns["Type"]
  readonly drawnBefore: DrawnLog | null
  readonly annotationsBefore: HashMap.HashMap<string, unknown>
  readonly drawn: DrawnLog
}

/**
 * Known as running (what `/stop` interrupts) from here to its end; its ids drawn into a log of its own. A chain,
 * not a generator: every turn opens here (the annotations read from the fiber, the drawn-ids log swapped in one
 * operation).
 */
const enterTurn = (input: TurnInput, hooks: TurnHooks): Effect.Effect<Entered, never, RunningTurns> =>
  Effect.flatMap(RunningTurns, (running) =>
    Effect.zipRight(
      Effect.zipRight(running.enter(input.sessionId), hooks.started(input)),
      Effect.withFiberRuntime<Entered>((fiber) => {
        const annotationsBefore = fiber.getFiberRef(FiberRef.currentLogAnnotations)
        const drawn = new DrawnLog()
        return FiberRef.modify(
          DrawnIds,
          (drawnBefore): readonly [Entered, DrawnLog] => [{ running, drawnBefore, annotationsBefore, drawn }, drawn]
        )
      })
    ))

/** What `enterTurn` set, put back; the turn no longer running. A chain, not a generator: it ends every turn. */
const leaveTurn = (input: TurnInput, hooks: TurnHooks, entered: Entered) =>
  Effect.zipRight(
    Effect.zipRight(
      FiberRef.set(DrawnIds, entered.drawnBefore),
      FiberRef.set(FiberRef.currentLogAnnotations, entered.annotationsBefore)
    ),
    Effect.zipRight(hooks.ended(input), entered.running.leave(input.sessionId))
  )

/**
 * What the programs of one turn share: its parts, its state and its identity. Made once per turn; the programs
 * that run on it (the loop, a step, a batch of calls) are made once, at module level, and so are its methods (on
 * its prototype): a generator function or a closure made per turn is held by every open conversation (a
 * generator function costs V8 a prototype and hidden classes of its own each time).
 */
class TurnContext implements OnAnswered {
  readonly input: TurnInput
  readonly traceId: string
  readonly config: AppConfig
  readonly counting: TokenCounting
  /** Each budget status the turn reads is recorded, in `budgetReads`: a replay reads the same ones. */
  readonly budget: Budget["Type"]
  readonly budgetReads: BudgetReadLog
  readonly registry: ToolRegistry["Type"]
  readonly promptBuilder: PromptBuilder["Type"]
  readonly audit: AuditLog["Type"]
  readonly llm: Llm["Type"]
  readonly policy: Policy["Type"]
  readonly sink: TraceSink["Type"]
  /**
   * The clock and whether a tracer exports spans (the turn's optional spans are made only then), read once when
   * the turn opens, as its services are: each Thought, gate, call and observation would otherwise read them again,
   * an operation each time.
   */
  readonly runtime: StepRuntime
  /** The channel's progress listener, when one watches the turn (set around the whole turn). */
  readonly listener: ((progress: TurnProgress) => Effect.Effect<void>) | undefined
  readonly identity: {
    readonly traceId: string
    readonly sessionId: string
    readonly channel: string
    /** The owner's own words: the message without the text it quotes. */
    readonly userMessage: string
  }
  /** The turn's messages as last counted: each Thought reads only the messages added since. */
  readonly counted: MessagesFold<number> = messagesChars()
  /** The turn so far. This program is its only writer, through `update` and `updateNow`. */
  private turnState: TurnState.TurnState

  constructor(parts: TurnParts, first: TurnState.TurnState) {
    this.input = parts.input
    this.traceId = parts.traceId
    this.config = parts.config
    this.counting = parts.counting
    this.budget = parts.budget
    this.budgetReads = parts.budgetReads
    this.registry = parts.registry
    this.promptBuilder = parts.promptBuilder
    this.audit = parts.audit
    this.llm = parts.llm
    this.policy = parts.policy
    this.sink = parts.sink
    this.runtime = parts.runtime
    this.listener = parts.listener
    const { channel, quoted, sessionId, userMessage } = parts.input
    // The owner's own words: a host a tool result names is vouched for only when the owner named it.
    this.identity = {
      traceId: parts.traceId,
      sessionId,
      channel,
      userMessage: quoted === undefined ? userMessage : ownWords(userMessage, quoted)
    }
    this.turnState = first
  }

  /** The turn as it stands, read in one synchronous step (one runtime operation, where a Ref's read is two). */
  get state(): Effect.Effect<TurnState.TurnState> {
    return Effect.sync(() => this.turnState)
  }

  /** The turn as it stands, read at once from a continuation that is running already (no operation at all). */
  current(): TurnState.TurnState {
    return this.turnState
  }

  /** Replaces the turn, in one synchronous step. */
  update(f: (state: TurnState.TurnState) => TurnState.TurnState): Effect.Effect<void> {
    return Effect.sync(() => this.updateNow(f))
  }

  /** Replaces the turn at once, from a continuation that is running already (no operation at all). */
  updateNow(f: (state: TurnState.TurnState) => TurnState.TurnState): void {
    this.turnState = f(this.turnState)
  }

  /** A paid answer, recorded by the handler that receives it. */
  answered(answered: Thought & { readonly _tag: "Answered" }): void {
    this.turnState = TurnState.thought(this.turnState, answered.step, answered.response)
  }

  /** What the gate needs of the turn, as it stands now. */
  gateContext(): GateContext {
    return {
      traceId: this.traceId,
      sessionId: this.input.sessionId,
      channel: this.input.channel,
      provenance: provenanceOf(this.turnState),
      provenanceAtLaunch: Effect.sync(() => provenanceOf(this.turnState))
    }
  }
}

/**
 * What a turn is made of when it opens: its input, the services it uses and what it read of its fiber (the
 * context's fields but those it makes itself; its state and methods are not fields).
 */
type TurnParts = Omit<
  {
    readonly [K in keyof TurnContext as TurnContext[K] extends (...args: never) => unknown ? never : K]: TurnContext[K]
  },
  "identity" | "counted" | "state"
>

/** One call run and recorded, even when the turn is interrupted; `then` once it is recorded. */
const runOne = <A>(t: TurnContext, run: Run, then: A) => {
  const recorded = (exit: Exit.Exit<Executed>) =>
    Effect.flatMap(observe(run, exit, t.identity, t), (observation) => {
      t.updateNow((current) => TurnState.observed(current, observation))
      return Exit.isFailure(exit) ? Effect.failCause(exit.cause) : Effect.succeed(then)
    })
  // One handler for both outcomes (`Effect.exit` and a `flatMap` would be two): it runs for every tool call.
  return Effect.uninterruptibleMask((restore) =>
    Effect.matchCauseEffect(restore(execute(run, t.traceId, t)), {
      onSuccess: (executed) => recorded(Exit.succeed(executed)),
      onFailure: (cause) => recorded(Exit.failCause(cause))
    })
  )
}

const runSideBySide = Effect.fnUntraced(function*(t: TurnContext, runs: ReadonlyArray<Run>, restore: Restore) {
  const fibers = yield* Effect.forEach(runs, (run) => Effect.fork(restore(execute(run, t.traceId, t))))
  const all = yield* Effect.exit(restore(Fiber.awaitAll(fibers)))
  if (Exit.isFailure(all)) yield* Fiber.interruptAll(fibers)
  for (let i = 0; i < runs.length; i++) {
    const observation = yield* observe(runs[i]!, yield* Fiber.await(fibers[i]!), t.identity, t)
    yield* t.update((current) => TurnState.observed(current, observation))
  }
  if (Exit.isFailure(all)) return yield* Effect.failCause(all.cause)
})

/** Read-only calls side by side; each is recorded, in the model's order, even when the turn is interrupted. */
const runTogether = (t: TurnContext, runs: ReadonlyArray<Run>) =>
  runs.length === 1
    ? runOne(t, runs[0]!, undefined)
    : Effect.uninterruptibleMask((restore) => runSideBySide(t, runs, restore))

/** Consecutive read-only calls may run side by side; anything else runs alone, after everything before it. */
const concurrent = (t: TurnContext, call: ToolCall): boolean => {
  const tool = t.registry.find(call.name)
  return tool !== undefined && !tool.hasSideEffects && tool.targetKind !== "host"
}

/** Whether the Thought that proposed these calls stopped at the model's output limit. */
const lastThoughtCut = (state: TurnState.TurnState): boolean => {
  for (let i = state.steps.length - 1; i >= 0; i--) {
    const step = state.steps[i]!
    if (step.kind === "thought") return step.finish_reason === "length"
  }
  return false
}

/** A call the gate did not let run: its step recorded; how the turn ends because of it, or null to go on. */
const refused = Effect.fnUntraced(function*(t: TurnContext, call: ToolCall, given: Exclude<Gate, Run>) {
  // A call the model's output limit cut (its JSON unfinished, or, where the provider parses it, fields missing): the
  // model is told so, or it would write the same long call again, be cut again, and end as tool_hallucination.
  const gated = given._tag === "Invalid" && lastThoughtCut(yield* t.state)
    ? Gate.Invalid({ call: given.call, validation: given.validation, message: `${given.message}\n${cutArgumentsHint}` })
    : given
  const step = actionStep(gated)
  yield* withSpanWhenTraced(
    "Turn.action",
    () => ({
      attributes: { "gen_ai.tool.name": call.name, "myclaw.policy.decision": step.policy_decision ?? "none" }
    })
  )(
    t.update((current) =>
      TurnState.observed(current, {
        step,
        invalid: gated._tag === "Invalid",
        message: gated._tag === "Invalid"
          ? { role: "tool", toolCallId: call.id, name: call.name, content: gated.message, isError: true }
          : undefined
      })
    )
  )
  const end = gateEnd(gated)
  if (end !== null) return Next.End(end)
  if ((yield* t.state).invalidStreak >= 2) {
    return Next.End({ outcome: "tool_hallucination", response: invalidStreakMessage })
  }
  return null
})

/** The model's tool calls, each through the gate, in its order. */
const act = (t: TurnContext, calls: ReadonlyArray<ToolCall>) =>
  calls.length === 1 ? actOne(t, calls[0]!) : actAll(t, calls)

/** One tool call, the common case: nothing to batch, so no generator (it runs for most steps). */
const actOne = (t: TurnContext, call: ToolCall) =>
  Effect.flatMap(gateWith(t.registry, t.policy, call, t.gateContext()), (gated) => {
    if (gated._tag !== "Invalid" && gated.decision.forceTier === "frontier") t.updateNow(TurnState.forcedFrontier)
    if (gated._tag !== "Run") return Effect.map(refused(t, call, gated), (end) => end ?? Next.Continue())
    return runOne(t, gated, Next.Continue())
  })

const actAll = Effect.fnUntraced(function*(t: TurnContext, calls: ReadonlyArray<ToolCall>) {
  let batch: Array<Run> = []
  const flush = Effect.suspend(() => {
    const runs = batch
    batch = []
    return runs.length === 0 ? Effect.void : runTogether(t, runs)
  })
  for (const call of calls) {
    const together = concurrent(t, call)
    if (!together) yield* flush
    const gated = yield* gateWith(t.registry, t.policy, call, t.gateContext())
    if (gated._tag !== "Invalid" && gated.decision.forceTier === "frontier") yield* t.update(TurnState.forcedFrontier)
    if (gated._tag === "Run") {
      if (together && gated.approval === null) {
        batch.push(gated)
      } else {
        yield* flush
        yield* runOne(t, gated, undefined)
      }
      continue
    }
    yield* flush
    const end = yield* refused(t, call, gated)
    if (end !== null) return end
  }
  yield* flush
  return Next.Continue()
})

/** What the steps need from their context: what their compactions, calls and conclusions need. */
type StepServices =
  | Effect.Effect.Context<NonNullable<ReturnType<typeof compactTurn>>>
  | Effect.Effect.Context<ReturnType<typeof act>>
  | Effect.Effect.Context<ReturnType<typeof concluded>>

/** What follows a step, given how it ended: the next step, or the turn's end. */
type AfterStep = (next: Next) => Effect.Effect<TurnEnd, never, StepServices>

/**
 * One step: the budget read, the turn compacted if it no longer fits, the model asked, then what its answer asks
 * for, then `after`. A chain of continuations, not a generator: a turn waiting on its model holds no frame of the
 * step's (what follows it is chained once the model has answered), nor a suspended generator with its registers,
 * and a step allocates no generator for its common path.
 */
const step = (t: TurnContext, after: AfterStep) => {
  // Told at once when the budget can (no operation); read otherwise.
  const status = t.budget.statusAt?.(t.runtime.clock.unsafeCurrentTimeMillis())
  return status === undefined
    ? Effect.flatMap(t.budget.status, (read) => budgeted(t, read, after))
    : budgeted(t, status, after)
}

/** The step once the budget's status is known. */
const budgeted = (t: TurnContext, status: BudgetStatus, after: AfterStep) => {
  if (status.level === "hard") return after(Next.End({ outcome: "budget_hit", response: budgetHitMessage(status) }))
  const before = t.current()
  const compaction = compactTurn(before.messages, {
    counting: t.counting,
    counted: t.counted,
    taintedBy: TurnState.taintSources(before),
    recordRequest: t.config.traces.recordRequests
  }, t.runtime.traced)
  if (compaction === undefined) return ask(t, status, before, after)
  return Effect.flatMap(compaction, (squeezed) => {
    if (squeezed === null) return ask(t, status, before, after)
    t.updateNow((current) => TurnState.turnCompacted(current, squeezed))
    return ask(t, status, t.current(), after)
  })
}

/** The model asked on the tier the budget allows; tool calls go to `act`, anything else ends the turn. */
const ask = (t: TurnContext, status: BudgetStatus, current: TurnState.TurnState, after: AfterStep) => {
  const tier = status.level === "soft" && !current.forceFrontier ? "local-fast" : "frontier"
  const request = { tier, system: current.system, messages: current.messages, tools: current.tools } as const
  // A paid answer is recorded by the handler that receives it. Fingerprinted when the trace is made (see
  // `TurnState.thought`): a turn waiting on the model holds none.
  return thinkThen(
    t.llm,
    t.runtime,
    request,
    t.config.traces.recordRequests,
    "later",
    t,
    (thought) =>
      Effect.flatMap(
        thought._tag === "Answered" && thought.response.toolCalls.length > 0
          ? act(t, thought.response.toolCalls)
          : concluded(t, thought),
        after
      )
  )
}

/** A Thought that ends the turn: a failed call, or an answer without tool calls (with the soft cap's notice). */
const concluded = Effect.fnUntraced(function*(t: TurnContext, thought: Thought) {
  const { budget } = t
  if (thought._tag === "Failed") {
    yield* t.update((s) => TurnState.withMetadata(s, "error", encodeThoughtError(thought.error)))
    if (thought.error._tag === "BudgetExceeded") {
      return Next.End({ outcome: "budget_hit", response: budgetRefusedMessage(thought.error, yield* budget.status) })
    }
    const current = t.current()
    const ran = current.steps.flatMap((step) =>
      step.kind === "action" && step.exec_result !== null ? [step.tool_name] : []
    )
    return Next.End({ outcome: "timeout_steps", response: llmFailureMessage(thought.error, ran, current.traceId) })
  }
  const answer = answerText(thought.response.text, thought.response.finishReason)
  const after = yield* budget.status
  if (!after.softNoticePending) return Next.End({ outcome: "success", response: answer })
  yield* budget.softNoticeGiven
  return Next.End({ outcome: "success", response: `${answer}\n\n${softCapNotice(after)}` })
})

/** A command with a closed meaning: answered by its rule, its calls (if any) through the same gates. */
const applyRule = Effect.fnUntraced(function*(t: TurnContext, name: string) {
  const { input, traceId } = t
  yield* t.update((current) => TurnState.routed(current, "rule", `/${name} is answered by its rule, without a model`))
  const decision = yield* decide(name, input, traceId)
  for (const [key, value] of Object.entries(decision.metadata ?? {})) {
    yield* t.update((current) => TurnState.withMetadata(current, key, value))
  }
  if (decision._tag === "Answer") return { outcome: decision.outcome, response: decision.response }
  const before = (yield* t.state).steps.length
  yield* t.update((current) => TurnState.proposed(current, decision.calls))
  const next = yield* act(t, decision.calls)
  if (next._tag === "End") return next
  const steps = (yield* t.state).steps.slice(before).filter((s): s is ActionStep => s.kind === "action")
  return { outcome: "success", response: decision.answer(steps) } as const
})

/**
 * The turn up to its first Thought: a rule's answer, a refusal, the session's summary, the prompt and a cached
 * plan may end it here; otherwise it goes on to its steps, with the channel's progress listener. Its registers
 * (the prompt, the session's history) are let go before the steps begin.
 */
const prepare = Effect.fnUntraced(function*(t: TurnContext) {
  const { input, config, audit, promptBuilder, traceId } = t
  const rule = ruleCommand(input.userMessage)
  if (rule !== undefined) return endedBefore(yield* applyRule(t, rule.name))
  // Refused before any model is paid: a turn that cannot be recorded does not run.
  const ready = yield* Effect.either(audit.ready)
  if (ready._tag === "Left") {
    yield* t.update((current) => TurnState.withMetadata(current, UNRECORDED, ready.left.message))
    return endedBefore({ outcome: "policy_denied", response: unrecordedMessage(ready.left.message) })
  }
  const compaction = yield* compactSession(input, config.traces.recordRequests)
  if (compaction._tag === "Compacted") yield* t.update((current) => TurnState.compacted(current, compaction))
  const built = yield* Effect.either(
    promptBuilder.build({
      sessionId: input.sessionId,
      channel: input.channel,
      userMessage: input.userMessage,
      // Read once per turn, by the compaction: after it stored a summary, the summary and the turns after it.
      history: compaction.history
    })
  )
  if (built._tag === "Left") {
    const error = built.left
    if (
      (error._tag === "WorkspaceError" && error.reason === "ConstitutionMissing") ||
      (error._tag === "SessionError" && error.reason === "Forbidden")
    ) {
      return endedBefore({ outcome: "policy_denied", response: `Not done: ${error.message}.` })
    }
    return yield* error
  }
  const prompt = built.right
  yield* t.update((current) => TurnState.prompted(current, prompt))
  // A cached plan first: its calls pass the same gates; whatever stops it hands the turn to the loop below.
  const fast = yield* fastPath(input, traceId, {
    act: (calls) => act(t, calls),
    state: t.state,
    update: (f) => t.update(f)
  })
  if (fast._tag === "Served") return endedBefore(fast)
  yield* t.update((current) => TurnState.routed(current, "react", fast.reason))
  return readyForSteps(t.listener)
})

/** How a turn ends: its outcome and its answer. */
interface TurnEnd {
  readonly outcome: Outcome
  readonly response: string | null
}

type Prepared =
  | { readonly _tag: "Ended"; readonly end: TurnEnd }
  | { readonly _tag: "Ready"; readonly listener: ((progress: TurnProgress) => Effect.Effect<void>) | undefined }

const endedBefore = (end: TurnEnd): Prepared => ({ _tag: "Ended", end })
const readyForSteps = (listener: ((progress: TurnProgress) => Effect.Effect<void>) | undefined): Prepared => ({
  _tag: "Ready",
  listener
})

/**
 * Step after step until one ends the turn, at most `maxSteps`: each step is the continuation of the last, not an
 * iteration of a suspended generator (a parked turn holds no frame here).
 */
const steps = (
  t: TurnContext,
  listener: ((progress: TurnProgress) => Effect.Effect<void>) | undefined,
  n: number
): Effect.Effect<TurnEnd, never, StepServices> => {
  const { maxSteps } = t.config
  if (n >= maxSteps) return Effect.succeed({ outcome: "timeout_steps", response: stepsExhaustedMessage(maxSteps) })
  const after: AfterStep = (next) => next._tag === "End" ? Effect.succeed(next) : steps(t, listener, n + 1)
  // Made where it runs: the step reads the budget as it is made, after the progress report.
  return listener === undefined
    ? step(t, after)
    : Effect.zipRight(listener({ _tag: "Step", step: n + 1, maxSteps }), Effect.suspend(() => step(t, after)))
}

const loop = (t: TurnContext) =>
  Effect.flatMap(
    prepare(t),
    (prepared) => prepared._tag === "Ended" ? Effect.succeed(prepared.end) : steps(t, prepared.listener, 0)
  )

/** The turn's loop, made when it runs (a suspension would hold an effect and a closure for it). */
class Looping extends Effectable.Class<
  Effect.Effect.Success<ReturnType<typeof loop>>,
  Effect.Effect.Error<ReturnType<typeof loop>>,
  Effect.Effect.Context<ReturnType<typeof loop>>
> {
  constructor(readonly t: TurnContext) {
    super()
  }

  commit() {
    return loop(this.t)
  }
}

/** The turn's services, its trace id (its logs annotated with it) and its first state. */
const openTurn = Effect.fnUntraced(function*(
  input: TurnInput,
  annotationsBefore: HashMap.HashMap<string, unknown>
) {
  const { context: provided, runtime } = yield* servicesAndRuntime<
    MyclawConfig | Budget | ToolRegistry | PromptBuilder | TraceSink | AuditLog | IdGenerator | Llm | Policy
  >()
  const { clock, traced } = runtime
  // A channel that shows progress sets its listener around the whole turn.
  const listener = yield* progressListener
  const { config } = Context.get(provided, MyclawConfig)
  const counting = tokenCountingOf(config)
  // Each budget status the turn reads is recorded: a replay reads the same ones.
  const budgetReads = new BudgetReadLog()
  const budget = recordingReads(Context.get(provided, Budget), budgetReads)
  const registry = Context.get(provided, ToolRegistry)
  const promptBuilder = Context.get(provided, PromptBuilder)
  const sink = Context.get(provided, TraceSink)
  const audit = Context.get(provided, AuditLog)
  const traceId = yield* Context.get(provided, IdGenerator).next("trace")
  yield* FiberRef.set(
    FiberRef.currentLogAnnotations,
    HashMap.set(HashMap.set(annotationsBefore, "trace_id", traceId), "session_id", input.sessionId)
  )
  const first = TurnState.start(input, traceId, clock.unsafeCurrentTimeMillis(), registry.catalog)
  if (traced) yield* Effect.annotateCurrentSpan({ trace_id: traceId, session_id: input.sessionId })
  return new TurnContext({
    input,
    traceId,
    config,
    counting,
    budget,
    budgetReads,
    registry,
    promptBuilder,
    audit,
    llm: Context.get(provided, Llm),
    policy: Context.get(provided, Policy),
    sink,
    runtime,
    listener
  }, first)
})

/** How the loop's outcome ends the turn: an interruption as user_aborted, a defect as an internal error. */
const endOf = (exit: Exit.Exit<TurnEnd, unknown>) => (current: TurnState.TurnState): TurnState.TurnState => {
  if (Exit.isSuccess(exit)) return TurnState.ended(current, exit.value.outcome, exit.value.response)
  if (Cause.isInterruptedOnly(exit.cause)) return TurnState.ended(current, "user_aborted", interruptedMessage)
  return TurnState.ended(
    TurnState.withMetadata(current, "error", Cause.pretty(exit.cause)),
    "timeout_steps",
    internalErrorMessage
  )
}

/**
 * The loop's outcome recorded, the trace closed. Made where it runs (by the handler of the loop's outcome): the
 * outcome is recorded as it is made. A chain, not a generator: it ends every turn; with plans off, no plan is
 * looked for.
 */
const finishTurn = (
  t: TurnContext,
  drawn: DrawnLog,
  exit: Exit.Exit<TurnEnd, unknown>
) => {
  t.updateNow(endOf(exit))
  const closed = t.current()
  const close = () => {
    const trace = TurnState.toTrace(closed, t.runtime.clock.unsafeCurrentTimeMillis(), drawn.all(), t.budgetReads.all())
    return t.listener === undefined
      ? Effect.as(t.sink.close(trace), trace)
      : Effect.zipRight(t.sink.close(trace), Effect.as(t.listener({ _tag: "Closed", trace }), trace))
  }
  // The trace's end is read once the plan is kept.
  return t.config.plans.enabled ? Effect.zipRight(rememberPlan(closed), Effect.suspend(close)) : close()
}

/** The services a turn needs: the runtime provides exactly these. */
export type TurnServices = Effect.Effect.Context<ReturnType<typeof runTurn>>
