import { Schema } from "effect"
import { ConfigValue } from "./SecretRef.js"

const withDefault = <S extends Schema.Schema.AnyNoContext>(schema: S, value: () => Schema.Schema.Type<S>) =>
  Schema.optionalWith(schema, { default: value })

/** A server name becomes the prefix of its tools' names (`<server>__<tool>`), so it is kept short and plain. */
export const isMcpServerName = (name: string): boolean => /^[a-z0-9_-]{1,32}$/.test(name) && !name.includes("__")

const EnvName = Schema.String.pipe(Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]*$/, {
  message: () => "expected the name of an environment variable"
}))
const HeaderName = Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, {
  message: () => "expected an HTTP header name"
}))
const HttpUrl = Schema.String.pipe(
  Schema.filter((url) => /^https?:\/\/[^\s/]+/.test(url) || "expected an http:// or https:// URL")
)

/**
 * One MCP server: a command spawned over stdio, or a Streamable HTTP endpoint. Its tools are assumed to have side
 * effects unless listed in `readOnlyTools`: the server's own annotations are hints, never trusted for policy.
 */
export const McpServerConfig = Schema.Struct({
  command: Schema.optional(Schema.String.pipe(Schema.minLength(1))),
  args: withDefault(Schema.Array(Schema.String), () => []),
  env: withDefault(Schema.Record({ key: EnvName, value: ConfigValue }), () => ({})),
  url: Schema.optional(HttpUrl),
  headers: withDefault(Schema.Record({ key: HeaderName, value: ConfigValue }), () => ({})),
  readOnlyTools: withDefault(Schema.Array(Schema.String.pipe(Schema.minLength(1))), () => [])
}).pipe(Schema.filter((server) => {
  if (server.command === undefined && server.url === undefined) {
    return "an MCP server needs \"command\" (a program spawned over stdio) or \"url\" (Streamable HTTP)"
  }
  if (server.command !== undefined && server.url !== undefined) {
    return "an MCP server has either \"command\" or \"url\", not both"
  }
  if (server.url !== undefined && (server.args.length > 0 || Object.keys(server.env).length > 0)) {
    return "\"args\" and \"env\" apply to a spawned server (\"command\"), not to a \"url\""
  }
  if (server.command !== undefined && Object.keys(server.headers).length > 0) {
    return "\"headers\" apply to a \"url\" server, not to a spawned \"command\""
  }
  return true
}))
export type McpServerConfig = typeof McpServerConfig.Type

const PositiveInt = Schema.Int.pipe(Schema.positive())

export const McpConfig = Schema.Struct({
  servers: withDefault(
    Schema.Record({ key: Schema.String, value: McpServerConfig }).pipe(
      Schema.filter((servers) =>
        Object.keys(servers).filter((name) => !isMcpServerName(name)).map((name) =>
          `"${name}" is not a valid MCP server name: use 1 to 32 lowercase letters, digits, _ or - (and no "__")`
        ).join("; ") || true
      )
    ),
    () => ({})
  ),
  /** A server that dies is restarted after baseDelayMs, doubling on each failure up to maxDelayMs. */
  restart: withDefault(
    Schema.Struct({
      baseDelayMs: withDefault(PositiveInt, () => 1_000),
      maxDelayMs: withDefault(PositiveInt, () => 60_000)
    }),
    () => ({ baseDelayMs: 1_000, maxDelayMs: 60_000 })
  )
})
export type McpConfig = typeof McpConfig.Type

export const defaultMcpConfig = (): McpConfig => ({ servers: {}, restart: { baseDelayMs: 1_000, maxDelayMs: 60_000 } })
