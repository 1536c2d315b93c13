import { Clock, Effect, FiberRef, Layer, Metric, MetricBoundaries, MetricKey, MetricLabel } from "effect"
import { channelKind } from "../domain/Channel.js"
import type { ActionStep, ApprovalRecord, ExecutionTrace, ThoughtStep } from "../domain/ExecutionTrace.js"
import { outcomes, type Tier } from "../domain/ExecutionTrace.js"
import { isExporting } from "../programs/Spans.js"
import { Budget } from "../services/Budget.js"
import { Metrics } from "../services/Metrics.js"
import { ToolRegistry } from "../services/ToolRegistry.js"

/** The metric families (names, types and labels are a contract), plus process basics. */
const tracesKey = MetricKey.counter("myclaw_traces_total", {
  description: "Closed traces by outcome",
  incremental: true
})
const costToday = Metric.gauge("myclaw_cost_eur_today", { description: "Cost of today (local day), in EUR" })
const latency = Metric.summary({
  name: "myclaw_trace_latency_ms",
  description: "Wall time of closed traces in milliseconds (last 24 hours, at most 1000 samples)",
  maxAge: "24 hours",
  maxSize: 1000,
  error: 0.01,
  quantiles: [0.5, 0.95, 0.99]
})
const activeSessionsKey = MetricKey.gauge("myclaw_active_sessions", { description: "Turns in progress, by channel" })
const budgetRemaining = Metric.gauge("myclaw_budget_remaining_eur", {
  description: "Budget left today before each cap, in EUR"
})
const toolCallsKey = MetricKey.counter("myclaw_tool_calls_total", {
  description: "Tool calls by tool",
  incremental: true
})
const approvalsKey = MetricKey.counter("myclaw_approvals_total", {
  description: "Approval verdicts: granted (explicitly, by a batch window or a session grant), denied, timed out",
  incremental: true
})
const tierCallsKey = MetricKey.counter("myclaw_llm_tier_calls_total", {
  description: "LLM calls by tier",
  incremental: true
})
const llmDurationKey = MetricKey.histogram(
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

/**
 * One metric per label value, made once from its tagged key: the same series as `Metric.tagged(metric, label,
 * value)`, whose every update builds and hashes that key again.
 */
const perValue = <A>(make: (value: string) => A): (value: string) => A => {
  const made = new Map<string, A>()
  return (value) => {
    const known = made.get(value)
    if (known !== undefined) return known
    const metric = make(value)
    made.set(value, metric)
    return metric
  }
}
const tracesBy = perValue((outcome) => Metric.fromMetricKey(MetricKey.tagged(tracesKey, "outcome", outcome)))
const toolCallsBy = perValue((tool) => Metric.fromMetricKey(MetricKey.tagged(toolCallsKey, "tool", tool)))
const tierCallsBy = perValue((tier) => Metric.fromMetricKey(MetricKey.tagged(tierCallsKey, "tier", tier)))
const llmDurationBy = perValue((tier) => Metric.fromMetricKey(MetricKey.tagged(llmDurationKey, "tier", tier)))
const activeSessionsBy = perValue((channel) =>
  Metric.fromMetricKey(MetricKey.tagged(activeSessionsKey, "channel", channel))
)
const approvalsBy = perValue((verdict) =>
  perValue((via) =>
    Metric.fromMetricKey(
      MetricKey.taggedWithLabels(approvalsKey, [MetricLabel.make("verdict", verdict), MetricLabel.make("via", via)])
    )
  )
)

/** Every series has both labels: `via` says which window or grant granted, and who or what denied. */
const approvalCounter = (approval: ApprovalRecord) => {
  const deniedVia = (deniedVias as ReadonlyArray<string>).includes(approval.via) ? approval.via : "explicit"
  const labels = approval.granted
    ? { verdict: "granted", via: approval.via === "batch" || approval.via === "session" ? approval.via : "explicit" }
    : approval.via === "timeout"
    ? { verdict: "timeout", via: "timeout" }
    : { verdict: "denied", via: deniedVia }
  return approvalsBy(labels.verdict)(labels.via)
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
    yield* Effect.forEach(outcomes, (outcome) => Metric.incrementBy(tracesBy(outcome), 0))
    yield* Effect.forEach(tiers, (tier) => Metric.incrementBy(tierCallsBy(tier), 0))
    yield* Effect.forEach(tiers, (tier) => Metric.value(llmDurationBy(tier)))
    yield* Metric.value(latency)
    yield* Effect.forEach(toolNames, (tool) => Metric.incrementBy(toolCallsBy(tool), 0))
    yield* Effect.forEach(
      knownChannels,
      (channel) => Metric.incrementBy(activeSessionsBy(channel), 0)
    )
    yield* Effect.forEach(
      approvalLabels,
      (labels) => Metric.incrementBy(approvalsBy(labels.verdict)(labels.via), 0)
    )

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

    // The metrics of a closed trace are updated in one synchronous stretch: a trace has a step per Thought and
    // per tool call, and an effect per update was a visible share of closing it.
    // The labels read from the fiber itself, in the same operation: one operation a trace, and its span only when
    // a tracer exports spans.
    const observed = (trace: ExecutionTrace, labels: ReadonlyArray<MetricLabel.MetricLabel>) => {
      tracesBy(trace.outcome).unsafeUpdate(1, labels)
      latency.unsafeUpdate(trace.wall_time_ms, labels)
      for (const step of trace.steps) {
        if (step.kind === "thought") thoughtObserved(step, labels)
        if (step.kind === "action") actionObserved(step, labels)
      }
      return trace.metadata.error === undefined ? Effect.void : errorObserved
    }
    const traceClosed = (trace: ExecutionTrace): Effect.Effect<void> =>
      Effect.withFiberRuntime((fiber) =>
        isExporting(fiber.currentTracer)
          ? Effect.withSpan(
            Effect.withFiberRuntime((inner) => observed(trace, inner.getFiberRef(FiberRef.currentMetricLabels))),
            "Metrics.traceClosed"
          )
          : observed(trace, fiber.getFiberRef(FiberRef.currentMetricLabels))
      )
    const thoughtObserved = (step: ThoughtStep, labels: ReadonlyArray<MetricLabel.MetricLabel>) => {
      tierCallsBy(step.tier).unsafeUpdate(1, labels)
      llmDurationBy(step.tier).unsafeUpdate(step.wall_ms / 1000, labels)
    }
    const actionObserved = (step: ActionStep, labels: ReadonlyArray<MetricLabel.MetricLabel>) => {
      // Only tools of the catalog: a hallucinated name must not become a label.
      if (toolNames.has(step.tool_name)) toolCallsBy(step.tool_name).unsafeUpdate(1, labels)
      if (step.approval !== null) approvalCounter(step.approval).unsafeUpdate(1, labels)
    }

    // `Metric.incrementBy`, with the labels read from the fiber in the same operation: every turn starts and ends.
    const sessions = (channel: string, delta: number): Effect.Effect<void> =>
      Effect.withFiberRuntime((fiber) => {
        activeSessionsBy(channelKind(channel)).unsafeModify(delta, fiber.getFiberRef(FiberRef.currentMetricLabels))
        return Effect.void
      })

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
      traceClosed,
      turnStarted: (channel) => sessions(channel, 1),
      turnEnded: (channel) => sessions(channel, -1),
      errorObserved,
      recentErrors,
      scrape
    })
  })
)
