import { Effect, Layer } from "effect"
import type { Tool } from "../../domain/Tool.js"
import { McpServers } from "../../services/McpServers.js"
import { MyclawConfig } from "../../services/MyclawConfig.js"
import { ToolRegistry } from "../../services/ToolRegistry.js"
import * as Compose from "../Compose.js"
import { McpServersNone } from "../mcp/McpServersNone.js"
import { builtinTools, makeToolRegistry, ToolRegistryWith } from "./ToolRegistryLive.js"

/**
 * The catalog from the configuration: the built-in tools, `extra`, and the tools of every configured MCP server
 * (connected for the lifetime of the layer). Without MCP servers the MCP client is never even loaded.
 */
export const ToolRegistryConfigured = (extra: ReadonlyArray<Tool> = []) =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const { config } = yield* MyclawConfig
    if (Object.keys(config.mcp.servers).length === 0) return Compose.merge(ToolRegistryWith(extra), McpServersNone)
    const { makeMcpServers } = yield* Effect.promise(() => import("../mcp/McpServersLive.js"))
    const mcp = yield* makeMcpServers(config.mcp, config.timeouts.toolMs)
    const registry = Effect.flatMap(builtinTools, (builtins) => makeToolRegistry([...builtins, ...extra, ...mcp.tools]))
    return Compose.merge(Layer.effect(ToolRegistry, registry), Layer.succeed(McpServers, mcp.service))
  }))
