import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Tool as McpToolInfo } from "@modelcontextprotocol/sdk/types.js"
import { Deferred, Effect, Exit, Option, Redacted } from "effect"
import type { Scope } from "effect"
import type { McpServerConfig } from "../../domain/McpConfig.js"
import { McpError } from "../../domain/McpError.js"
import type { ConfigValue } from "../../domain/SecretRef.js"
import type { Secrets } from "../../services/Secrets.js"
import { version } from "../../Version.js"

/** A live session with one server: its client, its tools as listed at connection, and a signal when it closes. */
export interface McpConnection {
  readonly client: Client
  readonly tools: ReadonlyArray<McpToolInfo>
  readonly closed: Deferred.Deferred<void>
  /** The last lines the server wrote to stderr (a spawned server only), for the log when it dies. */
  readonly stderrTail: () => string
}

const STDERR_TAIL = 2_000

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** Env or header values with every `{"secret": NAME}` resolved: done at connection time, never stored. */
const resolveValues = (
  server: string,
  values: Readonly<Record<string, ConfigValue>>,
  secrets: Option.Option<Secrets["Type"]>
) =>
  Effect.forEach(Object.entries(values), ([key, value]) => {
    if (typeof value === "string") return Effect.succeed([key, value] as const)
    return Option.match(secrets, {
      onNone: () =>
        Effect.fail(
          new McpError({
            server,
            reason: "Secret",
            message: `${key} names the secret ${value.secret}, but no secret store is available`
          })
        ),
      onSome: (store) =>
        store.resolve(value.secret).pipe(
          Effect.map((redacted) => [key, Redacted.value(redacted)] as const),
          Effect.mapError((error) => new McpError({ server, reason: "Secret", message: `${key}: ${error.message}` }))
        )
    })
  }).pipe(Effect.map((entries) => Object.fromEntries(entries)))

const listAllTools = (client: Client, timeout: number) =>
  Effect.tryPromise({
    try: async (signal) => {
      const tools: Array<McpToolInfo> = []
      let cursor: string | undefined
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor }, { signal, timeout })
        tools.push(...page.tools)
        cursor = page.nextCursor
      } while (cursor !== undefined)
      return tools
    },
    catch: (error) => error
  })

/**
 * Connects to one server (spawning it for stdio) and lists its tools. The session lasts as long as the scope;
 * closing the scope closes the client (and stops a spawned server).
 */
export const connectMcp = (
  name: string,
  server: McpServerConfig,
  timeoutMs: number,
  secrets: Option.Option<Secrets["Type"]>
): Effect.Effect<McpConnection, McpError, Scope.Scope> =>
  Effect.gen(function*() {
    const client = new Client({ name: "myclaw", version })
    let tail = ""
    let transport: StdioClientTransport | StreamableHTTPClientTransport
    if (server.command !== undefined) {
      const env = yield* resolveValues(name, server.env, secrets)
      const stdio = new StdioClientTransport({ command: server.command, args: [...server.args], env, stderr: "pipe" })
      // Read the server's stderr so that it never blocks on a full pipe; keep its end for the log.
      stdio.stderr?.on("data", (chunk: Buffer) => {
        tail = (tail + chunk.toString("utf8")).slice(-STDERR_TAIL)
      })
      transport = stdio
    } else {
      const headers = yield* resolveValues(name, server.headers, secrets)
      transport = new StreamableHTTPClientTransport(new URL(server.url!), { requestInit: { headers } })
    }
    const closed = yield* Deferred.make<void>()
    client.onclose = () => Deferred.unsafeDone(closed, Exit.void)
    yield* Effect.addFinalizer(() => Effect.promise(() => client.close().catch(() => undefined)))
    yield* Effect.tryPromise({
      try: (signal) => client.connect(transport, { signal, timeout: timeoutMs }),
      catch: (error) => {
        const output = tail.trim()
        const message = output === "" ? messageOf(error) : `${messageOf(error)}; its last output: ${output}`
        return new McpError({ server: name, reason: "Connect", message })
      }
    })
    // A server without the tools capability (prompts or resources only) contributes no tools.
    if (client.getServerCapabilities()?.tools === undefined) {
      return {
        client,
        tools: [],
        closed,
        stderrTail: () => tail
      }
    }
    const tools = yield* listAllTools(client, timeoutMs).pipe(
      Effect.mapError((error) => new McpError({ server: name, reason: "ListTools", message: messageOf(error) }))
    )
    return { client, tools, closed, stderrTail: () => tail }
  })
