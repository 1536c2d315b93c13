import { Clock, Effect, Layer, Metric, MetricBoundaries } from "effect"
import { channelKind } from "../domain/Channel.js"
import type { ActionStep, ApprovalRecord, ExecutionTrace, ThoughtStep } from "../domain/ExecutionTrace.js"
import { outcomes, type Tier } from "../domain/ExecutionTrace.js"
import { withSpanWhenTraced } from "../programs/Spans.js"
import { Budget } from "../services/Budget.js"
import { Metrics } from "../services/Metrics.js"
import { ToolRegistry } from "../services/ToolRegistry.js"

/** The metric families (names, types and labels are a contract), plus process basics. */
const traces = Metric.counter("myclaw_traces_total", { description: "Closed traces by outcome", incremental: true })
const costToday = Metric.gauge("myclaw_cost_eur_today", { description: "Cost of today (local day), in EUR" })
const latency = Metric.summary({
  name: "myclaw_trace_latency_ms",
  description: "Wall time of closed traces in milliseconds (last 24 hours, at most 1000 samples)",
  maxAge: "24 hours",
  maxSize: 1000,
  error: 0.01,
  quantiles: [0.5, 0.95, 0.99]
})
const activeSessions = Metric.gauge("myclaw_active_sessions", { description: "Turns in progress, by channel" })
const budgetRemaining = Metric.gauge("myclaw_budget_remaining_eur", {
  description: "Budget left today before each cap, in EUR"
})
const toolCalls = Metric.counter("myclaw_tool_calls_total", { description: "Tool calls by tool", incremental: true })
const approvals = Metric.counter("myclaw_approvals_total", {
  description: "Approval verdicts: granted (explicitly, by a batch window or a session grant), denied, timed out",
  incremental: true
})
const tierCalls = Metric.counter("myclaw_llm_tier_calls_total", { description: "LLM calls by tier", incremental: true })
const llmDuration = Metric.histogram(
  "myclaw_llm_call_duration_seconds",
  MetricBoundaries.fromIterable([0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120]),
  "Wall time of answered LLM calls (retries and failovers included), in seconds, by tier"
)
const startTime = Metric.gauge("process_start_time_seconds", {
  description: "Start time of the process since the Unix epoch, in seconds"
})
const residentMemory = Metric.gauge("process_resident_memory_bytes", { description: "Resident memory size in bytes" })

const tiers: ReadonlyArray<Tier> = ["frontier", "local-fast"]
const knownChannels = ["cli", "http", "telegram"]
/** How a denial came about, bounded: the owner said no (`explicit`, whatever the channel), or the runtime decided. */
const deniedVias = [
  "explicit",
  "no_channel",
  "non_interactive",
  "limit",
  "interrupted",
  "restart",
  "audit_failed",
  "store_failed"
] as const
const approvalLabels = [
  { verdict: "granted", via: "explicit" },
  { verdict: "granted", via: "batch" },
  { verdict: "granted", via: "session" },
  ...deniedVias.map((via) => ({ verdict: "denied", via })),
  { verdict: "timeout", via: "timeout" }
] as const

/** Every series has both labels: `via` says which window or grant granted, and who or what denied. */
const approvalCounter = (approval: ApprovalRecord) => {
  const deniedVia = (deniedVias as ReadonlyArray<string>).includes(approval.via) ? approval.via : "explicit"
  const labels = approval.granted
    ? { verdict: "granted", via: approval.via === "batch" || approval.via === "session" ? approval.via : "explicit" }
    : approval.via === "timeout"
    ? { verdict: "timeout", via: "timeout" }
    : { verdict: "denied", via: deniedVia }
  return Object.entries(labels).reduce((metric, [key, value]) => Metric.tagged(metric, key, value), approvals)
}

/**
 * The families /metrics shows. Effect's own fiber metrics are left out: `effect_fiber_active` is a counter that
 * goes down, which Prometheus would misread.
 */
const exposed = /^(myclaw|process)_/

const ONE_HOUR_MS = 3_600_000
/** Beyond this many errors in an hour /health only needs to know there were many. */
const MAX_ERRORS_KEPT = 10_000

/** The Metrics service over Effect's global metric registry; budget gauges are read from Budget at scrape time. */
export const MetricsLive = Layer.effect(
  Metrics,
  Effect.gen(function*() {
    const budget = yield* Budget
    const toolNames = new Set((yield* ToolRegistry).tools.map((tool) => tool.name))
    yield* Metric.set(startTime, Math.floor(performance.timeOrigin / 1000))
    yield* Effect.forEach(outcomes, (outcome) => Metric.incrementBy(Metric.tagged(traces, "outcome", outcome), 0))
    yield* Effect.forEach(tiers, (tier) => Metric.incrementBy(Metric.tagged(tierCalls, "tier", tier), 0))
    yield* Effect.forEach(tiers, (tier) => Metric.value(Metric.tagged(llmDuration, "tier", tier)))
    yield* Metric.value(latency)
    yield* Effect.forEach(toolNames, (tool) => Metric.incrementBy(Metric.tagged(toolCalls, "tool", tool), 0))
    yield* Effect.forEach(
      knownChannels,
      (channel) => Metric.incrementBy(Metric.tagged(activeSessions, "channel", channel), 0)
    )
    yield* Effect.forEach(approvalLabels, (labels) =>
      Metric.incrementBy(
        Object.entries(labels).reduce((metric, [key, value]) => Metric.tagged(metric, key, value), approvals),
        0
      ))

    const errors: Array<number> = []
    const prune = (now: number) => {
      const firstRecent = errors.findIndex((at) => at > now - ONE_HOUR_MS)
      errors.splice(0, firstRecent === -1 ? errors.length : firstRecent)
    }
    const errorObserved = Effect.map(Clock.currentTimeMillis, (now) => {
      errors.push(now)
      if (errors.length > MAX_ERRORS_KEPT) errors.splice(0, errors.length - MAX_ERRORS_KEPT)
    })
    const recentErrors = Effect.map(Clock.currentTimeMillis, (now) => {
      prune(now)
      return errors.length
    })

    const traceClosed = (trace: ExecutionTrace) =>
      Effect.gen(function*() {
        yield* Metric.increment(Metric.tagged(traces, "outcome", trace.outcome))
        yield* Metric.update(latency, trace.wall_time_ms)
        for (const step of trace.steps) {
          if (step.kind === "thought") yield* thoughtObserved(step)
          if (step.kind === "action") yield* actionObserved(step)
        }
        if (trace.metadata.error !== undefined) yield* errorObserved
      })
    const thoughtObserved = (step: ThoughtStep) =>
      Effect.zipRight(
        Metric.increment(Metric.tagged(tierCalls, "tier", step.tier)),
        Metric.update(Metric.tagged(llmDuration, "tier", step.tier), step.wall_ms / 1000)
      )
    const actionObserved = (step: ActionStep) =>
      Effect.zipRight(
        // Only tools of the catalog: a hallucinated name must not become a label.
        toolNames.has(step.tool_name)
          ? Metric.increment(Metric.tagged(toolCalls, "tool", step.tool_name))
          : Effect.void,
        step.approval === null ? Effect.void : Metric.increment(approvalCounter(step.approval))
      )

    const sessions = (channel: string, delta: number) =>
      Metric.incrementBy(Metric.tagged(activeSessions, "channel", channelKind(channel)), delta)

    const scrape = Effect.gen(function*() {
      const status = yield* budget.status
      yield* Metric.set(costToday, status.spentEur)
      yield* Metric.set(Metric.tagged(budgetRemaining, "cap", "soft"), Math.max(0, status.softCapEur - status.spentEur))
      yield* Metric.set(Metric.tagged(budgetRemaining, "cap", "hard"), Math.max(0, status.hardCapEur - status.spentEur))
      yield* Metric.set(residentMemory, process.memoryUsage.rss())
      const pairs = yield* Metric.snapshot
      return pairs.filter((pair) => exposed.test(pair.metricKey.name))
    })

    return Metrics.of({
      traceClosed: (trace: ExecutionTrace) => withSpanWhenTraced("Metrics.traceClosed")(traceClosed(trace)),
      turnStarted: (channel) => sessions(channel, 1),
      turnEnded: (channel) => sessions(channel, -1),
      errorObserved,
      recentErrors,
      scrape
    })
  })
)
