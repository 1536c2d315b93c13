import { Effect, Layer, Stream } from "effect"
import { McpServers } from "../../services/McpServers.js"

/** No MCP server configured: nothing to report. */
export const McpServersNone = Layer.succeed(
  McpServers,
  McpServers.of({ status: Effect.succeed([]), changes: Stream.make([]) })
)
