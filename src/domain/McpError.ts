import { Schema } from "effect"

/** An MCP server could not be started, reached or used; the message names the server, never a secret's value. */
export class McpError extends Schema.TaggedError<McpError>()("McpError", {
  server: Schema.String,
  reason: Schema.Literal("Secret", "Connect", "ListTools"),
  message: Schema.String
}) {}
