import { MetricKeyType, MetricState, Option } from "effect"
import type { MetricPair } from "effect"

/** The Content-Type of the text exposition format 0.0.4. */
export const prometheusContentType = "text/plain; version=0.0.4; charset=utf-8"

type FamilyType = "counter" | "gauge" | "histogram" | "summary"

interface Family {
  readonly name: string
  readonly type: FamilyType
  readonly help: string
  /** Sample lines keyed by the series' label text, so that the output is sorted and a series appears once. */
  readonly series: Map<string, ReadonlyArray<string>>
}

const typeOf = (keyType: unknown): FamilyType | undefined =>
  MetricKeyType.isCounterKey(keyType)
    ? "counter"
    : MetricKeyType.isGaugeKey(keyType)
    ? "gauge"
    : MetricKeyType.isHistogramKey(keyType)
    ? "histogram"
    : MetricKeyType.isSummaryKey(keyType)
    ? "summary"
    : undefined

/** Metric and label names restricted to the format's alphabet; anything else becomes `_`. */
export const metricName = (name: string): string => {
  const safe = name.replace(/[^a-zA-Z0-9_:]/g, "_")
  return /^[0-9]/.test(safe) ? `_${safe}` : safe
}
const labelName = (name: string): string => {
  const safe = name.replace(/[^a-zA-Z0-9_]/g, "_")
  return /^[0-9]/.test(safe) ? `_${safe}` : safe
}

export const escapeLabelValue = (value: string): string =>
  value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, "\\\"")
const escapeHelp = (text: string): string => text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

export const formatValue = (value: number | bigint): string => {
  if (typeof value === "bigint") return value.toString()
  if (Number.isNaN(value)) return "NaN"
  if (value === Infinity) return "+Inf"
  if (value === -Infinity) return "-Inf"
  return String(value)
}

const labelText = (labels: ReadonlyArray<readonly [string, string]>): string =>
  labels.length === 0 ? "" : `{${labels.map(([key, value]) => `${key}="${escapeLabelValue(value)}"`).join(",")}}`

const samples = (
  name: string,
  state: MetricState.MetricState.Untyped,
  labels: ReadonlyArray<readonly [string, string]>
): ReadonlyArray<string> => {
  const line = (suffix: string, extra: ReadonlyArray<readonly [string, string]>, value: number | bigint) =>
    `${name}${suffix}${labelText([...labels, ...extra])} ${formatValue(value)}`
  if (MetricState.isCounterState(state)) return [line("", [], state.count)]
  if (MetricState.isGaugeState(state)) return [line("", [], state.value)]
  if (MetricState.isHistogramState(state)) {
    const buckets = state.buckets.map(([le, count]) => line("_bucket", [["le", formatValue(le)]], count))
    if (state.buckets.at(-1)?.[0] !== Infinity) buckets.push(line("_bucket", [["le", "+Inf"]], state.count))
    return [...buckets, line("_sum", [], state.sum), line("_count", [], state.count)]
  }
  if (MetricState.isSummaryState(state)) {
    return [
      ...state.quantiles.map(([q, value]) =>
        line("", [["quantile", formatValue(q)]], Option.getOrElse(value, () => NaN))
      ),
      line("_sum", [], state.sum),
      line("_count", [], state.count)
    ]
  }
  return []
}

/**
 * Renders `Metric.snapshot` as the Prometheus text exposition format 0.0.4: one HELP and one TYPE line per
 * family, families and series sorted, label values escaped, summaries as quantiles plus `_sum` and `_count`,
 * histograms as cumulative `_bucket`s (ending in `+Inf`) plus `_sum` and `_count`. Frequencies have no
 * counterpart in the format and are left out; so is a series whose type contradicts its family's.
 */
export const renderPrometheus = (pairs: ReadonlyArray<MetricPair.MetricPair.Untyped>): string => {
  const families = new Map<string, Family>()
  for (const { metricKey, metricState } of pairs) {
    const type = typeOf(metricKey.keyType)
    if (type === undefined) continue
    const name = metricName(metricKey.name)
    let family = families.get(name)
    if (family === undefined) {
      const help = Option.getOrElse(metricKey.description, () => name)
      family = { name, type, help: help.trim() === "" ? name : help, series: new Map() }
      families.set(name, family)
    } else if (family.type !== type) {
      continue
    }
    const labels = new Map<string, string>()
    for (const tag of metricKey.tags) labels.set(labelName(tag.key), tag.value)
    const sorted = [...labels].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    family.series.set(labelText(sorted), samples(name, metricState, sorted))
  }
  const lines: Array<string> = []
  for (const family of [...families.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`)
    for (const key of [...family.series.keys()].sort()) lines.push(...family.series.get(key)!)
  }
  return lines.length === 0 ? "" : lines.join("\n") + "\n"
}
