import { assert, describe, it } from "@effect/vitest"
import { Effect, ParseResult } from "effect"
import { decodeAppConfig } from "../../src/domain/AppConfig.js"
import { configProblems } from "../../src/domain/ConfigProblems.js"

/** The lines a user sees for a configuration that does not decode. */
const problems = (json: unknown) =>
  decodeAppConfig(json).pipe(
    Effect.flip,
    Effect.map((error) => configProblems(ParseResult.ArrayFormatter.formatErrorSync(error)))
  )

describe("the mcp section of myclaw.json", () => {
  it.effect("defaults to no servers, so existing configurations stay valid", () =>
    Effect.gen(function*() {
      const config = yield* decodeAppConfig({})
      assert.deepStrictEqual(config.mcp, { servers: {}, restart: { baseDelayMs: 1_000, maxDelayMs: 60_000 } })
    }))

  it.effect("decodes a stdio server (with a secret in its env) and an HTTP server, filling their defaults", () =>
    Effect.gen(function*() {
      const config = yield* decodeAppConfig({
        mcp: {
          servers: {
            files: { command: "npx", args: ["-y", "some-server"], env: { TOKEN: { secret: "FILES_TOKEN" } } },
            "web-search_2": { url: "https://mcp.example/mcp", readOnlyTools: ["search"] }
          }
        }
      })
      assert.deepStrictEqual(config.mcp.servers.files, {
        command: "npx",
        args: ["-y", "some-server"],
        env: { TOKEN: { secret: "FILES_TOKEN" } },
        headers: {},
        readOnlyTools: []
      })
      assert.deepStrictEqual(config.mcp.servers["web-search_2"]!.readOnlyTools, ["search"])
    }))

  it.effect("names what is wrong: neither or both of command and url, misplaced fields", () =>
    Effect.gen(function*() {
      const lines = yield* problems({
        mcp: {
          servers: {
            none: { readOnlyTools: [] },
            both: { command: "x", url: "http://127.0.0.1:1/" },
            remote: { url: "http://127.0.0.1:1/", env: { A: "b" } },
            local: { command: "x", headers: { authorization: "b" } },
            nourl: { url: "ftp://example.org" }
          }
        }
      })
      const text = lines.join("\n")
      assert.include(text, "an MCP server needs \"command\" (a program spawned over stdio) or \"url\"")
      assert.include(text, "an MCP server has either \"command\" or \"url\", not both")
      assert.include(text, "\"args\" and \"env\" apply to a spawned server")
      assert.include(text, "\"headers\" apply to a \"url\" server")
      assert.include(text, "expected an http:// or https:// URL")
    }))

  it.effect("rejects a server name that is not plain lowercase, or holds a double underscore (it separates server and tool in a tool's name)", () =>
    Effect.gen(function*() {
      const lines = yield* problems({ mcp: { servers: { a__b: { command: "x" }, "My Server": { command: "x" } } } })
      assert.include(lines.join("\n"), "\"a__b\" is not a valid MCP server name")
      assert.include(lines.join("\n"), "\"My Server\" is not a valid MCP server name: use 1 to 32 lowercase")
    }))

  it.effect("rejects a secret reference whose name is not a secret name", () =>
    Effect.gen(function*() {
      const lines = yield* problems({ mcp: { servers: { a: { command: "x", env: { K: { secret: "1 bad" } } } } } })
      assert.isAbove(lines.length, 0)
      assert.match(lines.join("\n"), /mcp\.servers\.a\.env\.K/)
    }))
})
