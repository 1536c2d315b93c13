import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeNet from "node:net"
import * as NodePath from "node:path"
import { main, myclaw, workspaceWith } from "../support/Cli.js"

const TOKEN = "serve-test-token-91c3"

/** `myclaw serve` on a free port; the address once it listens; SIGKILLed if still there when the scope closes. */
const serve = (home: string, env: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn("node", [main, "serve"], {
          env: { ...process.env, MYCLAW_HOME: home, MYCLAW_HTTP_PORT: "0", MYCLAW_ADMIN_TOKEN: TOKEN, ...env },
          stdio: ["ignore", "pipe", "pipe"]
        })
      ),
      (child) => Effect.sync(() => child.exitCode === null && child.kill("SIGKILL"))
    )
    const address = yield* Effect.async<string>((resume) => {
      let seen = ""
      child.stdout.on("data", (chunk: Buffer) => {
        seen += chunk.toString()
        const match = /Listening on (http:\/\/[\d.]+:\d+)/.exec(seen)
        if (match) resume(Effect.succeed(match[1]!))
      })
    })
    return { child, address }
  })

describe("myclaw serve", () => {
  it.scoped("a port in use: the address, EADDRINUSE and the variable to change, exit 1", () =>
    Effect.gen(function*() {
      const home = yield* workspaceWith([])
      const blocker = yield* Effect.acquireRelease(
        Effect.async<NodeNet.Server>((resume) => {
          const server = NodeNet.createServer()
          server.listen(0, "127.0.0.1", () => {
            resume(Effect.succeed(server))
          })
        }),
        (server) =>
          Effect.async<void>((resume) => {
            server.close(() => resume(Effect.void))
          })
      )
      const port = (blocker.address() as NodeNet.AddressInfo).port
      const run = yield* myclaw(["serve"], { MYCLAW_HOME: home, MYCLAW_HTTP_PORT: String(port) })
      assert.strictEqual(run.code, 1)
      assert.include(run.stderr, `127.0.0.1:${port}`)
      assert.include(run.stderr, "EADDRINUSE")
      assert.include(run.stderr, "MYCLAW_HTTP_PORT")
      assert.notInclude(run.stderr, "ServeError")
    }), 30_000)

  it.scoped(
    "SIGTERM drains turns in flight until the grace period, then interrupts them as user_aborted",
    () =>
      Effect.gen(function*() {
        const home = yield* workspaceWith([{ text: "too slow", delayMs: 120_000 }])
        const { address, child } = yield* serve(home, { MYCLAW_SHUTDOWN_GRACE_MS: "700" })
        const answer = fetch(`${address}/v1/turns`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
          body: JSON.stringify({ message: "take your time" })
        }).then(async (response) => ({ status: response.status, body: await response.text() }))
        // The turn is in flight once the metrics count an active http session.
        for (let i = 0; i < 400; i++) {
          const metrics = yield* Effect.promise(() =>
            fetch(`${address}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } }).then((r) => r.text())
          )
          if (/myclaw_active_sessions\{channel="http"\} 1/.test(metrics)) break
          yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
        }
        const started = Date.now()
        const code = yield* Effect.async<number | null>((resume) => {
          child.on("exit", (exitCode) => resume(Effect.succeed(exitCode)))
          child.kill("SIGTERM")
        })
        const elapsed = Date.now() - started
        assert.strictEqual(code, 0)
        // The model would answer in 120 s: stopping well before shows the drain's deadline held.
        assert.isBelow(elapsed, 60_000, "the drain has a deadline")
        const response = yield* Effect.promise(() => answer)
        assert.strictEqual(response.status, 503, response.body)
        assert.deepInclude(JSON.parse(response.body), { error: "shutting_down" })
        const dir = NodePath.join(home, ".audit", "traces")
        const traces = NodeFs.readdirSync(dir).filter((name) => name.endsWith(".jsonl")).flatMap((name) =>
          NodeFs.readFileSync(NodePath.join(dir, name), "utf8").trim().split("\n").map((line) => JSON.parse(line))
        )
        assert.deepStrictEqual(traces.map((trace) => trace.outcome), ["user_aborted"])
      }),
    30_000
  )
})
