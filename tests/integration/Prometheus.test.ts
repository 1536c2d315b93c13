import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Schedule } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as Net from "node:net"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { main, workspaceWith } from "../support/Cli.js"

const prometheusBin = ["/usr/bin/prometheus", "/usr/local/bin/prometheus"].find((path) => NodeFs.existsSync(path))
const TOKEN = "integration-token-9c1e"

if (prometheusBin === undefined) {
  console.warn("SKIPPED the Prometheus scrape test: no prometheus binary (apt-get install prometheus; .ci/run does it)")
}

/** A child process stopped when the scope closes: SIGTERM, then SIGKILL if it is still there after 5 s. */
const child = (command: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.acquireRelease(
    Effect.sync(() => spawn(command, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })),
    (process) =>
      Effect.async<void>((resume) => {
        if (process.exitCode !== null || process.signalCode !== null) return resume(Effect.void)
        const kill = setTimeout(() => process.kill("SIGKILL"), 5_000)
        process.once("exit", () => {
          clearTimeout(kill)
          resume(Effect.void)
        })
        process.kill("SIGTERM")
      })
  )

/** Resolves with the first match of `pattern` in the child's stdout or stderr. */
const waitFor = (process: ChildProcess, pattern: RegExp) =>
  Effect.async<string, Error>((resume) => {
    let seen = ""
    const onData = (chunk: Buffer) => {
      seen += chunk.toString()
      const match = pattern.exec(seen)
      if (match) resume(Effect.succeed(match[1]!))
    }
    process.stdout!.on("data", onData)
    process.stderr!.on("data", onData)
    process.once("exit", (code) => resume(Effect.fail(new Error(`exited with ${code} before ${pattern}:\n${seen}`))))
  }).pipe(Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error(`no ${pattern} within 20 s`) }))

const freePort = Effect.async<number>((resume) => {
  const server = Net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as Net.AddressInfo
    server.close(() => resume(Effect.succeed(port)))
  })
})

interface QueryResult {
  readonly status: string
  readonly data: {
    readonly result: ReadonlyArray<{ readonly metric: Record<string, string>; readonly value: [number, string] }>
  }
}

const query = (base: string, promql: string) =>
  Effect.tryPromise(async () => {
    const response = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(promql)}`)
    return (await response.json()) as QueryResult
  })

/** Polls the query API (bounded: 120 tries, 250 ms apart) until `ready` holds. */
const pollUntil = (base: string, promql: string, ready: (result: QueryResult) => boolean) =>
  query(base, promql).pipe(
    Effect.filterOrFail(ready, () => new Error(`${promql} not ready`)),
    Effect.retry(Schedule.spaced(Duration.millis(250)).pipe(Schedule.intersect(Schedule.recurs(120))))
  )

describe.skipIf(prometheusBin === undefined)("Prometheus scrapes myclaw serve", () => {
  it.scopedLive(
    "a real Prometheus scrapes /metrics with the admin token; its query API has myclaw_traces_total",
    () =>
      Effect.gen(function*() {
        const home = yield* workspaceWith([])
        const serve = yield* child("node", [main, "serve"], {
          MYCLAW_HOME: home,
          MYCLAW_HTTP_PORT: "0",
          MYCLAW_ADMIN_TOKEN: TOKEN,
          MYCLAW_LOG_LEVEL: "info"
        })
        const address = yield* waitFor(serve, /Listening on (http:\/\/127\.0\.0\.1:\d+)/)
        const dir = yield* Effect.acquireRelease(
          Effect.sync(() => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "myclaw-prom-"))),
          (dir) => Effect.sync(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
        )
        const config = NodePath.join(dir, "prometheus.yml")
        NodeFs.writeFileSync(
          config,
          [
            "global:",
            "  scrape_interval: 1s",
            "  scrape_timeout: 1s",
            "scrape_configs:",
            "  - job_name: myclaw",
            "    metrics_path: /metrics",
            "    authorization:",
            "      type: Bearer",
            `      credentials: ${TOKEN}`,
            "    static_configs:",
            `      - targets: ["${address.replace("http://", "")}"]`,
            ""
          ].join("\n")
        )
        const port = yield* freePort
        const prometheus = yield* child(prometheusBin!, [
          `--config.file=${config}`,
          `--storage.tsdb.path=${NodePath.join(dir, "data")}`,
          `--web.listen-address=127.0.0.1:${port}`,
          "--log.level=info"
        ])
        yield* waitFor(prometheus, /(Server is ready to receive web requests)/)
        const base = `http://127.0.0.1:${port}`

        const up = yield* pollUntil(base, "up{job=\"myclaw\"}", (r) => r.data.result[0]?.value[1] === "1")
        assert.strictEqual(up.data.result[0]!.metric.instance, address.replace("http://", ""))
        const traces = yield* pollUntil(base, "myclaw_traces_total", (r) => r.data.result.length >= 6)
        assert.strictEqual(traces.status, "success")
        assert.deepStrictEqual(
          traces.data.result.map((series) => series.metric.outcome).sort(),
          ["budget_hit", "policy_denied", "success", "timeout_steps", "tool_hallucination", "user_aborted"]
        )
        for (const series of traces.data.result) assert.strictEqual(series.metric.job, "myclaw")
        const latency = yield* pollUntil(base, "myclaw_trace_latency_ms_count", (r) => r.data.result.length === 1)
        assert.strictEqual(latency.status, "success")
      }),
    90_000
  )
})
