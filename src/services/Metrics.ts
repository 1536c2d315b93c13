import { Context } from "effect"
import type { Effect, MetricPair } from "effect"
import type { ExecutionTrace } from "../domain/ExecutionTrace.js"

/**
 * The process's counters. Everything is derived from closed traces
 * and read at scrape time from the services; `GET /metrics` renders `scrape`.
 */
export class Metrics extends Context.Tag("myclaw/Metrics")<Metrics, {
  /** Outcome, latency, tool calls, approvals and LLM calls of a closed trace. */
  readonly traceClosed: (trace: ExecutionTrace) => Effect.Effect<void>
  /** A turn began or ended on a channel (`telegram:@alice` counts as `telegram`). */
  readonly turnStarted: (channel: string) => Effect.Effect<void>
  readonly turnEnded: (channel: string) => Effect.Effect<void>
  /** Something went wrong that /health should count: an error log line, a trace that ended in an error. */
  readonly errorObserved: Effect.Effect<void>
  /** Errors observed in the last hour. */
  readonly recentErrors: Effect.Effect<number>
  /** The process's `myclaw_*` and `process_*` metrics (the registry is global), scrape-time gauges refreshed first. */
  readonly scrape: Effect.Effect<ReadonlyArray<MetricPair.MetricPair.Untyped>>
}>() {}
