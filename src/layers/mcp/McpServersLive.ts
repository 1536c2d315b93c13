import { Cause, Clock, Deferred, Duration, Effect, Exit, Option, Ref, SubscriptionRef } from "effect"
import type { Scope } from "effect"
import type { McpConfig, McpServerConfig } from "../../domain/McpConfig.js"
import type { Tool } from "../../domain/Tool.js"
import type { McpServerStatus } from "../../services/McpServers.js"
import { McpServers } from "../../services/McpServers.js"
import { Secrets } from "../../services/Secrets.js"
import { connectMcp, type McpConnection } from "./McpConnection.js"
import { makeMcpTool, mcpToolName } from "./McpTool.js"

type Statuses = SubscriptionRef.SubscriptionRef<ReadonlyArray<McpServerStatus>>

/** The delay before the next attempt after `failures` consecutive failures: doubling, capped. */
export const restartDelay = (restart: McpConfig["restart"], failures: number): number =>
  Math.min(restart.baseDelayMs * 2 ** Math.min(Math.max(failures - 1, 0), 30), restart.maxDelayMs)

const update = (statuses: Statuses, name: string, f: (status: McpServerStatus) => McpServerStatus) =>
  SubscriptionRef.update(statuses, (all) => all.map((status) => (status.name === name ? f(status) : status)))

const withOutput = (text: string, output: string) =>
  output.trim() === "" ? text : `${text}; its last output: ${output.trim()}`

/** Why a session ended: the server closed it (with what it last wrote on stderr), or it could not be opened. */
const downReason = (exit: Exit.Exit<string, unknown>): string =>
  Exit.match(exit, {
    onSuccess: (output) => withOutput("it closed the connection", output),
    onFailure: (cause) => {
      const error = Cause.squash(cause)
      return error instanceof Error ? error.message : String(error)
    }
  })

/**
 * Keeps one server connected for as long as the scope lives: connects, publishes the session, waits for it to
 * close, then waits (doubling on each consecutive failure, on the Effect clock) and connects again. A session
 * that stayed up longer than the longest delay resets the doubling. The first listing of its tools (or none, when
 * the first attempt fails) is handed to `first`.
 */
const supervise = (options: {
  readonly name: string
  readonly server: McpServerConfig
  readonly mcp: McpConfig
  readonly connect: (name: string, server: McpServerConfig) => Effect.Effect<McpConnection, unknown, Scope.Scope>
  readonly current: Ref.Ref<Option.Option<McpConnection>>
  readonly statuses: Statuses
  readonly first: Deferred.Deferred<Option.Option<McpConnection>>
  readonly redact: (text: string) => string
}) =>
  Effect.gen(function*() {
    const { current, first, mcp, name, redact, server, statuses } = options
    let failures = 0
    let connections = 0
    while (true) {
      let upSince: number | undefined
      const session = Effect.gen(function*() {
        const connection = yield* options.connect(name, server)
        upSince = yield* Clock.currentTimeMillis
        connections++
        yield* Ref.set(current, Option.some(connection))
        yield* Deferred.succeed(first, Option.some(connection))
        yield* update(statuses, name, (s) => ({ ...s, state: "up", restarts: connections - 1, retryAt: null }))
        yield* Effect.logInfo(`MCP server ${name} is up (${connection.tools.length} tools)`)
        yield* Deferred.await(connection.closed)
        return connection.stderrTail()
      }).pipe(Effect.scoped, Effect.ensuring(Ref.set(current, Option.none())))
      const exit = yield* Effect.exit(session)
      yield* Deferred.succeed(first, Option.none())
      const now = yield* Clock.currentTimeMillis
      failures = upSince !== undefined && now - upSince > mcp.restart.maxDelayMs ? 1 : failures + 1
      const retryAt = now + restartDelay(mcp.restart, failures)
      yield* update(statuses, name, (s) => ({ ...s, state: "down", retryAt }))
      yield* Effect.logWarning(
        `MCP server ${name} is down (${redact(downReason(exit))}); next attempt in ${retryAt - now} ms`
      )
      // Sleeping until a time (not for a duration) lets a test clock that already passed it wake the loop at once.
      yield* Effect.flatMap(
        Clock.currentTimeMillis,
        (at) => Effect.sleep(Duration.millis(Math.max(0, retryAt - at)))
      )
    }
  }).pipe(Effect.annotateLogs({ service: "McpServers", server: options.name }))

/**
 * Connects every configured server, lists its tools and keeps it connected (restarting it with backoff when it
 * dies). Returns the catalog tools (`<server>__<tool>`, fixed at start so that the catalog the model sees stays
 * stable: a tool of a server that is down stays listed and answers `failed`) and the status service.
 */
export const makeMcpServers = (mcp: McpConfig, timeoutMs: number) =>
  Effect.gen(function*() {
    const secrets = yield* Effect.serviceOption(Secrets)
    const redact = Option.match(secrets, { onNone: () => (text: string) => text, onSome: (s) => s.redact })
    const entries = Object.entries(mcp.servers)
    const statuses = yield* SubscriptionRef.make<ReadonlyArray<McpServerStatus>>(entries.map(([name, server]) => ({
      name,
      transport: server.command !== undefined ? "stdio" : "http",
      state: "starting",
      tools: 0,
      restarts: 0,
      retryAt: null
    })))
    const connect = (name: string, server: McpServerConfig) =>
      connectMcp(name, server, timeoutMs, secrets).pipe(Effect.timeoutFail({
        duration: Duration.millis(timeoutMs),
        onTimeout: () => `no answer within ${timeoutMs} ms`
      }))

    const perServer = yield* Effect.forEach(entries, ([name, server]) =>
      Effect.gen(function*() {
        const current = yield* Ref.make(Option.none<McpConnection>())
        const first = yield* Deferred.make<Option.Option<McpConnection>>()
        yield* Effect.forkScoped(
          supervise({ name, server, mcp, connect, current, statuses, first, redact })
        )
        return { name, server, current, first }
      }))

    const tools: Array<Tool> = []
    for (const { current, first, name, server } of perServer) {
      const connection = yield* Deferred.await(first)
      if (Option.isNone(connection)) {
        yield* Effect.logError(`MCP server ${name} did not start: its tools are missing until myclaw restarts`)
        continue
      }
      const own = connection.value.tools.flatMap((info) => {
        const toolName = mcpToolName(name, info.name)
        return toolName === undefined
          ? []
          : [makeMcpTool({ server: name, config: server, info, name: toolName, current, timeoutMs, redact })]
      })
      for (const info of connection.value.tools) {
        if (mcpToolName(name, info.name) === undefined) {
          yield* Effect.logWarning(`MCP tool ${name}/${info.name} is left out: its name does not fit a tool name`)
        }
      }
      yield* update(statuses, name, (s) => ({ ...s, tools: own.length }))
      tools.push(...own)
    }

    const service = McpServers.of({ status: SubscriptionRef.get(statuses), changes: statuses.changes })
    return { tools, service } as const
  }).pipe(Effect.annotateLogs({ service: "McpServers" }))
