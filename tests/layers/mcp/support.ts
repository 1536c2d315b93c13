import { Effect, Layer, Redacted, Stream } from "effect"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { SecretError } from "../../../src/domain/SecretError.js"
import { AgentRuntime } from "../../../src/services/AgentRuntime.js"
import { McpServers, type McpServerStatus } from "../../../src/services/McpServers.js"
import { Secrets } from "../../../src/services/Secrets.js"

/** The test MCP server (written with the SDK), spawned with the running node. */
export const serverScript = fileURLToPath(new URL("../../fixtures/mcp/server.mjs", import.meta.url))

export const stdioServer = (extra: Record<string, unknown> = {}) => ({
  command: process.execPath,
  args: [serverScript],
  ...extra
})

export const turn = (message: string) =>
  Effect.flatMap(AgentRuntime, (agent) => agent.handle({ userMessage: message, sessionId: "s", channel: "cli:me" }))

/** Waits (on the server's own status changes, not on a clock) until `name` is in `state`. */
export const awaitState = (name: string, state: McpServerStatus["state"]) =>
  Effect.flatMap(McpServers, (servers) =>
    servers.changes.pipe(
      Stream.map((all) => all.find((server) => server.name === name)),
      Stream.filter((server): server is McpServerStatus => server?.state === state),
      Stream.runHead,
      Effect.flatten,
      Effect.orDie
    ))

/** A secret store in memory: resolves the given values and redacts every one it was asked for. */
export const SecretsMemory = (values: Readonly<Record<string, string>>) => {
  const resolved = new Map<string, string>()
  return Layer.succeed(
    Secrets,
    Secrets.of({
      resolve: (name) => {
        const value = values[name]
        if (value === undefined) {
          return Effect.fail(new SecretError({ name, reason: "Missing", message: `no secret named ${name}` }))
        }
        resolved.set(name, value)
        return Effect.succeed(Redacted.make(value))
      },
      redact: (text) => [...resolved].reduce((out, [name, value]) => out.split(value).join(`[secret:${name}]`), text)
    })
  )
}

/** The test server over Streamable HTTP on 127.0.0.1, for the scope; its port. */
export const httpServer = (token: string) =>
  Effect.acquireRelease(
    Effect.async<{ readonly port: number; readonly kill: () => void }>((resume) => {
      const child = spawn(process.execPath, [serverScript, "http"], {
        env: { PATH: process.env.PATH ?? "", MCP_TEST_TOKEN: token },
        stdio: ["ignore", "pipe", "inherit"]
      })
      let out = ""
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8")
        const port = /listening (\d+)/.exec(out)?.[1]
        if (port !== undefined) resume(Effect.succeed({ port: Number(port), kill: () => child.kill("SIGKILL") }))
      })
      child.on("exit", (code) => resume(Effect.dieMessage(`the test MCP server exited (${code})`)))
    }),
    (server) => Effect.sync(() => server.kill())
  )
