import { DateTime } from "effect"
import {
  type ActionStep,
  type BudgetRead,
  type CompactionRecord,
  type DrawnId,
  type ExecutionTrace,
  type Outcome,
  type ThoughtStep,
  TRACE_FORMAT,
  type TraceStep,
  type TurnPath
} from "../../domain/ExecutionTrace.js"
import { hostsIn } from "../../domain/Hosts.js"
import type { LlmRequest, LlmResponse, Message, SystemBlock } from "../../domain/LlmTypes.js"
import { ownWords, QUOTED } from "../../domain/Quoted.js"
import { prefixFingerprints } from "../../domain/RequestFingerprint.js"
import type { ToolCall } from "../../domain/ToolCall.js"
import type { TurnInput } from "../../services/AgentRuntime.js"
import type { Prompt } from "../../services/PromptBuilder.js"
import type { PastTurn } from "../../services/TraceStore.js"
import { fingerprintPending, type Thought, withRequestHash } from "./Think.js"

/** Untrusted content that entered the turn: its sources, and the hosts it named that the user did not. */
export interface Taint {
  readonly sources: ReadonlyArray<string>
  readonly hosts: ReadonlySet<string>
  /** Sources of the earlier turns whose history the prompt replays. */
  readonly inherited: ReadonlyArray<string>
}

/** What an executed (or refused) tool call adds to the turn. */
export interface Observation {
  readonly step: ActionStep
  /** The tool message the model reads next (none when the call ends the turn). */
  readonly message?: Message | undefined
  /** An invalid call: two in a row end the turn. */
  readonly invalid: boolean
  /** Untrusted content it brought in, if any. */
  readonly taint?: { readonly source: string; readonly hosts: ReadonlyArray<string> } | undefined
  /** Content from a source the owner's policy trusts (recorded in the trace's `trusted_sources`). */
  readonly trusted?: { readonly source: string; readonly rule: string } | undefined
  /** Content that looked like an injection attempt (recorded, never obeyed). */
  readonly suspicion?: { readonly source: string; readonly pattern: string } | undefined
}

/**
 * The turn so far, as an immutable value. The turn program is its only writer: it applies the values its steps
 * return (a Thought, an Observation, an end) with the functions below.
 */
export interface TurnState {
  readonly input: TurnInput
  readonly traceId: string
  readonly startedAt: number
  readonly system: ReadonlyArray<SystemBlock>
  readonly messages: ReadonlyArray<Message>
  /** The session's past turns the prompt held (what a replay gives its prompt again). */
  readonly history: NonNullable<ExecutionTrace["replay"]>["history"]
  /** The summary of older turns the prompt held. */
  readonly summary: NonNullable<ExecutionTrace["replay"]>["summary"]
  /** What the summary of the session's older turns read on entering the turn, when it made one. */
  readonly compaction: CompactionRecord | undefined
  readonly steps: ReadonlyArray<TraceStep>
  readonly costUsd: number
  readonly invalidStreak: number
  /** A policy rule forced `frontier` for a sensitive call: later Thoughts ignore the soft cap. */
  readonly forceFrontier: boolean
  readonly taint: Taint
  readonly metadata: Readonly<Record<string, unknown>>
  readonly end: { readonly outcome: Outcome; readonly response: string | null } | null
  /** The path that served the turn and why a cheaper one was not taken (none: a turn that never chose). */
  readonly route: { readonly path: TurnPath; readonly reason: string } | null
  /** The tool catalog the turn's requests carry. */
  readonly tools: LlmRequest["tools"]
  /**
   * How many messages each Thought whose fingerprint is pending was asked with, in step order: its request was
   * `system`, `tools` and that many of `messages`, the messages as they stood when it was recorded (the loop's
   * Thoughts, all asked after the prompt was set). They are fingerprinted together when the turn's own history is
   * summarised (its messages replaced) and when the trace is made: a turn waiting on the model holds no
   * fingerprints, and each message is hashed once.
   */
  readonly unhashed: ReadonlyArray<number>
}

// Most turns read nothing untrusted: they share one empty set (a turn that does makes a set of its own).
const noHosts: ReadonlySet<string> = new Set()
// What a turn starts with and most keep empty, one frozen value shared by every turn: each is replaced, never
// changed in place, and an open conversation would otherwise hold its own copy of each.
const none: ReadonlyArray<never> = Object.freeze([])
const noMetadata: Readonly<Record<string, unknown>> = Object.freeze({})
const untainted: Taint = Object.freeze({ sources: none, hosts: noHosts, inherited: none })

/**
 * A message that quotes someone else's words (a forwarded message) is tainted from its start, by their source; a
 * host they name that the owner did not is an untrusted one.
 */
const quotedTaint = (input: TurnInput): Taint => {
  const untrusted = (input.quoted ?? []).filter((part) => part.untrusted)
  if (untrusted.length === 0) return untainted
  const named = hostsIn(ownWords(input.userMessage, input.quoted))
  return {
    sources: [...new Set(untrusted.map((part) => part.source))],
    hosts: new Set(untrusted.flatMap((part) => hostsIn(part.text)).filter((host) => !named.includes(host))),
    inherited: none
  }
}

export const start = (
  input: TurnInput,
  traceId: string,
  startedAt: number,
  tools: LlmRequest["tools"]
): TurnState => ({
  input,
  traceId,
  startedAt,
  system: none,
  messages: none,
  history: none,
  summary: undefined,
  compaction: undefined,
  steps: none,
  costUsd: 0,
  invalidStreak: 0,
  forceFrontier: false,
  taint: input.quoted === undefined ? untainted : quotedTaint(input),
  metadata: input.quoted === undefined ? noMetadata : { [QUOTED]: input.quoted },
  end: null,
  route: null,
  tools,
  unhashed: none
})

/**
 * The state with `changes`: a copy of every field, in the literal of `start`'s order, then the changes written over
 * it (fields it already has, so its shape does not change). A spread of the state into a literal is a copy through
 * V8's slow path (a state of this many fields is cloned into an object with four fields of its own and the rest in
 * a second array), and choosing each field with `in` cost four times this: every step makes several states.
 */
const changed = (state: TurnState, changes: Partial<TurnState>): TurnState =>
  Object.assign({
    input: state.input,
    traceId: state.traceId,
    startedAt: state.startedAt,
    system: state.system,
    messages: state.messages,
    history: state.history,
    summary: state.summary,
    compaction: state.compaction,
    steps: state.steps,
    costUsd: state.costUsd,
    invalidStreak: state.invalidStreak,
    forceFrontier: state.forceFrontier,
    taint: state.taint,
    metadata: state.metadata,
    end: state.end,
    route: state.route,
    tools: state.tools,
    unhashed: state.unhashed
  }, changes)

/** Every Thought whose fingerprint is pending, fingerprinted. */
const fingerprinted = (state: TurnState): TurnState => {
  if (state.unhashed.length === 0) return state
  const fingerprints = prefixFingerprints(state.system, state.tools, state.messages, state.unhashed)
  let next = 0
  const steps = state.steps.map((step) =>
    step.kind === "thought" && step.request_hash === fingerprintPending && next < fingerprints.length
      ? withRequestHash(step, fingerprints[next++]!)
      : step
  )
  return changed(state, { steps, unhashed: none })
}

export const prompted = (state: TurnState, prompt: Prompt): TurnState =>
  changed(state, {
    system: prompt.system,
    messages: prompt.messages,
    history: historyRecord(prompt.history ?? []),
    summary: prompt.summary === undefined
      ? undefined
      : { text: prompt.summary.text, tainted_by: prompt.summary.taintedBy },
    // Nothing inherited, again nothing: the turn keeps the taint it has (shared while it is the empty one).
    taint: prompt.taint.length === 0 && state.taint.inherited.length === 0
      ? state.taint
      : { ...state.taint, inherited: prompt.taint }
  })

/** Every source that tainted the turn, its own and those it inherited from the history it replayed. */
export const taintSources = (state: TurnState): ReadonlyArray<string> => [
  ...new Set([...state.taint.sources, ...state.taint.inherited])
]

/**
 * The list with one more item, in an array of exactly its length: `[...list, item]` grows its array as a push does,
 * half again and more, and a parked turn holds its steps, messages and counts in such arrays (and a copy loop is
 * faster than the spread).
 */
const appended = <A>(list: ReadonlyArray<A>, item: A): Array<A> => {
  const length = list.length
  const out = new Array<A>(length + 1)
  for (let i = 0; i < length; i++) out[i] = list[i]!
  out[length] = item
  return out
}

/**
 * A Thought: its step and cost, and the assistant message when it asks for tools. A step whose fingerprint is
 * taken `later` was asked with the turn's system prompt, tools and messages as they stand now.
 */
export const thought = (state: TurnState, step: ThoughtStep, response: LlmResponse): TurnState =>
  changed(state, {
    steps: appended(state.steps, step),
    unhashed: step.request_hash === fingerprintPending
      ? appended(state.unhashed, state.messages.length)
      : state.unhashed,
    costUsd: state.costUsd + step.cost_usd,
    messages: response.toolCalls.length === 0
      ? state.messages
      : appended(state.messages, { role: "assistant", content: response.text, toolCalls: response.toolCalls })
  })

/** The summary of the session's older turns made on entering this turn: its Thought, or why it failed. */
export const compacted = (
  state: TurnState,
  summary: { readonly thought: Thought; readonly failure: string | null; readonly record: CompactionRecord }
): TurnState => {
  const answered = summary.thought._tag === "Answered"
    ? thought(state, summary.thought.step, summary.thought.response)
    : state
  const next = changed(answered, { compaction: summary.record })
  return summary.failure === null ? next : withMetadata(next, "summary_failed", summary.failure)
}

/** The turn's own history replaced by its summary (or dropped with a note): its Thought, if the call answered. */
export const turnCompacted = (
  state: TurnState,
  summary: { readonly thought: Thought; readonly failure: string | null; readonly messages: ReadonlyArray<Message> }
): TurnState => {
  // The Thoughts asked with the messages about to be replaced are fingerprinted with them.
  const before = fingerprinted(state)
  const next = summary.thought._tag === "Answered"
    ? thought(before, summary.thought.step, summary.thought.response)
    : before
  const squeezed = changed(next, { messages: summary.messages })
  return summary.failure === null ? squeezed : withMetadata(squeezed, "turn_summary_failed", summary.failure)
}

export const forcedFrontier = (state: TurnState): TurnState =>
  state.forceFrontier ? state : changed(state, { forceFrontier: true })

export const observed = (state: TurnState, observation: Observation): TurnState => {
  const { suspicion, taint, trusted } = observation
  const metadata = trusted === undefined ? state.metadata : {
    ...state.metadata,
    trusted_sources: [...((state.metadata.trusted_sources as ReadonlyArray<unknown>) ?? []), trusted]
  }
  return changed(state, {
    steps: appended(state.steps, observation.step),
    messages: observation.message === undefined ? state.messages : appended(state.messages, observation.message),
    invalidStreak: observation.invalid ? state.invalidStreak + 1 : 0,
    taint: taint === undefined ? state.taint : {
      ...state.taint,
      sources: state.taint.sources.includes(taint.source)
        ? state.taint.sources
        : [...state.taint.sources, taint.source],
      hosts: taint.hosts.length === 0 ? state.taint.hosts : new Set([...state.taint.hosts, ...taint.hosts])
    },
    metadata: suspicion === undefined ? metadata : {
      ...metadata,
      injection_suspected: [...((metadata.injection_suspected as ReadonlyArray<unknown>) ?? []), suspicion]
    }
  })
}

/** The path the turn takes now (a later choice, e.g. a fallback to the ReAct loop, replaces it). */
export const routed = (state: TurnState, path: TurnPath, reason: string): TurnState =>
  changed(state, { route: { path, reason } })

/** Calls a plan proposes: the assistant message the model would have written, so a fallback reads on from it. */
export const proposed = (state: TurnState, calls: ReadonlyArray<ToolCall>): TurnState =>
  changed(state, { messages: appended(state.messages, { role: "assistant", content: "", toolCalls: calls }) })

export const withMetadata = (state: TurnState, key: string, value: unknown): TurnState =>
  changed(state, { metadata: { ...state.metadata, [key]: value } })

/** The turn's one outcome: the first end wins. */
export const ended = (state: TurnState, outcome: Outcome, response: string | null): TurnState =>
  state.end === null ? changed(state, { end: { outcome, response } }) : state

/**
 * The closed trace, every Thought with its request's fingerprint; the ids the turn drew and the budget statuses it
 * read, in order (a replay gets them again). `budgetReads` is kept as it is given: an array made for the trace.
 */
export const toTrace = (
  closed: TurnState,
  now: number,
  drawnIds: ReadonlyArray<DrawnId>,
  budgetReads: ReadonlyArray<BudgetRead> = []
): ExecutionTrace => traceOf(fingerprinted(closed), now, drawnIds, budgetReads)

const traceOf = (
  state: TurnState,
  now: number,
  drawnIds: ReadonlyArray<DrawnId>,
  budgetReads: ReadonlyArray<BudgetRead>
): ExecutionTrace => ({
  trace_id: state.traceId,
  session_id: state.input.sessionId,
  channel: state.input.channel,
  started_at: DateTime.unsafeMake(state.startedAt),
  finished_at: DateTime.unsafeMake(now),
  user_message: state.input.userMessage,
  steps: state.steps,
  final_response: state.end?.response ?? null,
  cost_usd: state.costUsd,
  wall_time_ms: now - state.startedAt,
  outcome: state.end?.outcome ?? "timeout_steps",
  metadata: taintSources(state).length === 0
    ? state.metadata
    : { ...state.metadata, taint_sources: taintSources(state) },
  format: TRACE_FORMAT,
  replay: {
    ids: drawnIds.slice(),
    history: state.history,
    ...(state.summary === undefined ? {} : { summary: state.summary }),
    budget: budgetReads,
    ...(state.compaction === undefined ? {} : { compaction: state.compaction })
  },
  ...(state.route === null ? {} : { path: state.route.path, path_reason: state.route.reason })
})

/** The past turns a prompt held, as the trace records them. */
const historyRecord = (turns: ReadonlyArray<PastTurn>): NonNullable<ExecutionTrace["replay"]>["history"] =>
  turns.length === 0 ? none : turns.map((turn) => ({
    user_message: turn.userMessage,
    final_response: turn.finalResponse,
    ...(turn.taintedBy === undefined ? {} : { tainted_by: turn.taintedBy }),
    ...(turn.answeredAt === undefined ? {} : { answered_at: turn.answeredAt })
  }))
