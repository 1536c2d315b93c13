import { assert, describe, it } from "@effect/vitest"
import { Effect, Metric, MetricBoundaries } from "effect"
import { escapeLabelValue, formatValue, metricName, renderPrometheus } from "../../src/http/Prometheus.js"
import { promtoolCheck, promtoolPath } from "./support.js"

/** The registry is global: each test renders only the metrics it made, by their prefix. */
const renderPrefix = (prefix: string) =>
  Effect.map(
    Metric.snapshot,
    (pairs) => renderPrometheus(pairs.filter((pair) => pair.metricKey.name.startsWith(prefix)))
  )

describe("renderPrometheus", () => {
  it.effect("counters: one HELP and TYPE per family, series sorted, label values and help escaped", () =>
    Effect.gen(function*() {
      const requests = Metric.counter("rc_requests_total", {
        description: "Requests \\ with \"quotes\"\nand a newline"
      })
      yield* Metric.incrementBy(Metric.tagged(requests, "path", "C:\\DIR\\FILE.TXT"), 2)
      yield* Metric.increment(Metric.tagged(requests, "path", "say \"hi\"\nbye"))
      yield* Metric.increment(Metric.counter("rc_other_total"))
      assert.strictEqual(
        yield* renderPrefix("rc_"),
        [
          "# HELP rc_other_total rc_other_total",
          "# TYPE rc_other_total counter",
          "rc_other_total 1",
          "# HELP rc_requests_total Requests \\\\ with \"quotes\"\\nand a newline",
          "# TYPE rc_requests_total counter",
          "rc_requests_total{path=\"C:\\\\DIR\\\\FILE.TXT\"} 2",
          "rc_requests_total{path=\"say \\\"hi\\\"\\nbye\"} 1",
          ""
        ].join("\n")
      )
    }))

  it.effect("gauges with several labels: labels sorted by name, so one series is one line", () =>
    Effect.gen(function*() {
      const gauge = Metric.gauge("rg_level", { description: "A level" })
      yield* Metric.set(gauge.pipe(Metric.tagged("zone", "b"), Metric.tagged("app", "x")), 1.5)
      yield* Metric.set(gauge.pipe(Metric.tagged("app", "x"), Metric.tagged("zone", "a")), -2)
      assert.strictEqual(
        yield* renderPrefix("rg_"),
        "# HELP rg_level A level\n# TYPE rg_level gauge\n" +
          "rg_level{app=\"x\",zone=\"a\"} -2\nrg_level{app=\"x\",zone=\"b\"} 1.5\n"
      )
    }))

  it.effect("histograms: cumulative buckets ending in +Inf, then _sum and _count", () =>
    Effect.gen(function*() {
      const histogram = Metric.histogram("rh_seconds", MetricBoundaries.fromIterable([0.5, 1]), "Durations")
      for (const value of [0.2, 0.7, 3]) yield* Metric.update(Metric.tagged(histogram, "tier", "frontier"), value)
      assert.strictEqual(
        yield* renderPrefix("rh_"),
        [
          "# HELP rh_seconds Durations",
          "# TYPE rh_seconds histogram",
          "rh_seconds_bucket{tier=\"frontier\",le=\"0.5\"} 1",
          "rh_seconds_bucket{tier=\"frontier\",le=\"1\"} 2",
          "rh_seconds_bucket{tier=\"frontier\",le=\"+Inf\"} 3",
          "rh_seconds_sum{tier=\"frontier\"} 3.9",
          "rh_seconds_count{tier=\"frontier\"} 3",
          ""
        ].join("\n")
      )
    }))

  it.effect("summaries: the quantiles as `quantile` labels, then _sum and _count; NaN before any sample", () =>
    Effect.gen(function*() {
      const summary = Metric.summary({
        name: "rs_full_seconds",
        maxAge: "1 hour",
        maxSize: 100,
        error: 0.01,
        quantiles: [0.5, 0.99],
        description: "Latency"
      })
      for (const value of [10, 10, 10, 10]) yield* Metric.update(summary, value)
      const text = yield* renderPrefix("rs_full")
      assert.strictEqual(
        text,
        [
          "# HELP rs_full_seconds Latency",
          "# TYPE rs_full_seconds summary",
          "rs_full_seconds{quantile=\"0.5\"} 10",
          "rs_full_seconds{quantile=\"0.99\"} 10",
          "rs_full_seconds_sum 40",
          "rs_full_seconds_count 4",
          ""
        ].join("\n")
      )
      const empty = Metric.summary({
        name: "rs_never_seconds",
        maxAge: "1 hour",
        maxSize: 10,
        error: 0.01,
        quantiles: [0.5],
        description: "Never observed"
      })
      yield* Metric.value(empty)
      assert.include(
        yield* renderPrefix("rs_never"),
        "rs_never_seconds{quantile=\"0.5\"} NaN\nrs_never_seconds_sum 0\nrs_never_seconds_count 0\n"
      )
    }))

  it.effect("names outside the alphabet are rewritten; a type conflict keeps the first family; no frequencies", () =>
    Effect.gen(function*() {
      const dotted = Metric.counter("rn.dotted-name_total", { description: "d" })
      yield* Metric.increment(Metric.tagged(dotted, "bad-label", "v"))
      yield* Metric.increment(Metric.counter("rn_conflict_total", { description: "as a counter" }))
      yield* Metric.set(Metric.gauge("rn_conflict_total", { description: "as a gauge" }), 5)
      yield* Metric.update(Metric.frequency("rn_frequency"), "a")
      const text = yield* renderPrefix("rn")
      assert.include(text, "# TYPE rn_dotted_name_total counter\nrn_dotted_name_total{bad_label=\"v\"} 1\n")
      assert.strictEqual(text.match(/# TYPE rn_conflict_total /g)?.length, 1)
      assert.notInclude(text, "rn_frequency")
    }))

  it("formats values and names as the format wants them", () => {
    assert.deepStrictEqual([NaN, Infinity, -Infinity, 0, 1e21, 0.1, 12n].map(formatValue), [
      "NaN",
      "+Inf",
      "-Inf",
      "0",
      "1e+21",
      "0.1",
      "12"
    ])
    assert.strictEqual(escapeLabelValue("a\\b\"c\nd"), "a\\\\b\\\"c\\nd")
    assert.strictEqual(metricName("9lives"), "_9lives")
    assert.strictEqual(renderPrometheus([]), "")
  })

  it.effect.skipIf(promtoolPath === undefined)(
    "promtool check metrics: every shape parses and lints clean",
    () =>
      Effect.gen(function*() {
        const text = yield* renderPrefix("r")
        for (
          const family of ["rc_requests_total", "rg_level", "rh_seconds", "rs_full_seconds", "rn_dotted_name_total"]
        ) {
          assert.include(text, `# TYPE ${family} `)
        }
        const check = yield* promtoolCheck(text)
        assert.strictEqual(check.code, 0, check.stderr)
      })
  )
})

if (promtoolPath === undefined) {
  console.warn("SKIPPED promtool checks: promtool is not installed (apt-get install prometheus; .ci/run does it)")
}
