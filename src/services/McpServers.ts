import { Context } from "effect"
import type { Effect, Stream } from "effect"

/** How one configured MCP server is doing. */
export interface McpServerStatus {
  readonly name: string
  readonly transport: "stdio" | "http"
  /** `starting` until the first connection, `up` while connected, `down` while waiting to restart. */
  readonly state: "starting" | "up" | "down"
  /** The tools it contributes to the catalog (fixed at start, so that the catalog stays stable). */
  readonly tools: number
  /** Connections made after the first one. */
  readonly restarts: number
  /** When the next connection attempt is due (epoch millis), while down. */
  readonly retryAt: number | null
}

/** The configured MCP servers, kept connected (and restarted with backoff) for the lifetime of the application. */
export class McpServers extends Context.Tag("myclaw/McpServers")<McpServers, {
  readonly status: Effect.Effect<ReadonlyArray<McpServerStatus>>
  /** The statuses, now and after every change. */
  readonly changes: Stream.Stream<ReadonlyArray<McpServerStatus>>
}>() {}
