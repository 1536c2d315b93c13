import type { CallToolResult, Tool as McpToolInfo } from "@modelcontextprotocol/sdk/types.js"
import { Deferred, Effect, Option } from "effect"
import type { Ref } from "effect"
import { selfContainedJsonSchema, toEffectSchema } from "../../domain/JsonSchemaParameters.js"
import type { McpServerConfig } from "../../domain/McpConfig.js"
import { defineTool, type Tool, type ToolOutput } from "../../domain/Tool.js"
import type { McpConnection } from "./McpConnection.js"

/** Model APIs accept tool names of letters, digits, _ and -, at most 64 characters. */
export const mcpToolName = (server: string, tool: string): string | undefined => {
  const name = `${server}__${tool}`
  return /^[A-Za-z0-9_-]{1,64}$/.test(name) ? name : undefined
}

const contentText = (result: CallToolResult): string => {
  const parts = result.content.map((item) => {
    switch (item.type) {
      case "text":
        return item.text
      case "resource":
        return "text" in item.resource ? item.resource.text : `[resource ${item.resource.uri}, binary, not shown]`
      case "resource_link":
        return `[resource ${item.uri}]`
      default:
        return `[${item.type} ${item.mimeType}, not shown]`
    }
  })
  const text = parts.join("\n")
  return text.trim() === "" && result.structuredContent !== undefined ? JSON.stringify(result.structuredContent) : text
}

const unavailable = (server: string, why = ""): ToolOutput => ({
  status: "failed",
  content: `server ${server} unavailable (restarting)${why}`
})

/**
 * A catalog tool over one tool of a server: validated against the server's JSON Schema, run on the server's
 * current session, its result untrusted. Side effects are assumed unless the configuration lists it read-only.
 */
export const makeMcpTool = (options: {
  readonly server: string
  readonly config: McpServerConfig
  readonly info: McpToolInfo
  readonly name: string
  readonly current: Ref.Ref<Option.Option<McpConnection>>
  readonly timeoutMs: number
  readonly redact: (text: string) => string
}): Tool => {
  const { config, current, info, redact, server, timeoutMs } = options
  const jsonSchema = selfContainedJsonSchema(info.inputSchema)
  const source = `mcp:${server}/${info.name}`
  const run = (args: unknown) =>
    Effect.gen(function*() {
      const connection = yield* current.get
      if (Option.isNone(connection)) return unavailable(server)
      const { client, closed } = connection.value
      const outcome = yield* Effect.either(Effect.tryPromise({
        try: (signal) =>
          client.callTool({ name: info.name, arguments: args as Record<string, unknown> }, undefined, {
            signal,
            timeout: timeoutMs
          }) as Promise<CallToolResult>,
        catch: (error) => (error instanceof Error ? error.message : String(error))
      }))
      if (outcome._tag === "Left") {
        if (yield* Deferred.isDone(closed)) return unavailable(server, ": the connection closed during the call")
        return { status: "failed", content: redact(`${server}/${info.name}: ${outcome.left}`), source } as const
      }
      const result = outcome.right
      const text = redact(contentText(result))
      if (result.isError === true) return { status: "failed", content: text, source } as const
      if (text.trim() === "") {
        return { status: "empty", content: `${server}/${info.name} returned nothing`, source } as const
      }
      return { status: "success", content: text, source } as const
    })
  return defineTool<unknown, unknown>({
    name: options.name,
    description: info.description ?? info.title ?? `${info.name} (from the MCP server ${server})`,
    parameters: toEffectSchema(jsonSchema),
    jsonSchema,
    hasSideEffects: !config.readOnlyTools.includes(info.name),
    external: true,
    targetKind: "none",
    summarize: (args) => `${server}/${info.name} ${JSON.stringify(args)}`,
    execute: run
  })
}
