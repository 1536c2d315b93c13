import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import type { ActionStep, ExecutionTrace } from "../../../src/domain/ExecutionTrace.js"
import { makeHealth } from "../../../src/http/Health.js"
import { TestLayer } from "../../../src/layers/Test.js"
import { McpServers } from "../../../src/services/McpServers.js"
import { ToolRegistry } from "../../../src/services/ToolRegistry.js"
import { awaitState, httpServer, SecretsMemory, stdioServer, turn } from "./support.js"

const actions = (trace: ExecutionTrace) => trace.steps.filter((s): s is ActionStep => s.kind === "action")

describe("MCP servers", () => {
  it.scoped("a configured server's tools join the catalog and a turn calls one, validated against its schema", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      const add = registry.find("calc__add")
      assert.isDefined(add)
      assert.isFalse(add!.hasSideEffects, "listed in readOnlyTools")
      assert.isTrue(add!.external)
      // The server's readOnlyHint is a hint, not a policy input.
      assert.isTrue(registry.find("calc__echo")!.hasSideEffects)
      const spec = registry.catalog.find((tool) => tool.name === "calc__add")!
      assert.deepStrictEqual(spec.parameters, {
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" } },
        required: ["a", "b"]
      })

      const trace = yield* turn("what is 2 + 3?")
      const [good, bad, failing, nothing] = actions(trace)
      assert.deepStrictEqual(good!.exec_result, { status: "success", content: "5", source: "mcp:calc/add" })
      assert.strictEqual(bad!.validation, "schema_error")
      assert.isNull(bad!.exec_result)
      assert.include(bad!.validation_error!, `- Requested tool: "calc__add" (exists in the catalog)`)
      assert.include(bad!.validation_error!, `- Argument "a": Expected number, actual "two"`)
      assert.include(bad!.validation_error!, `- Argument "b": missing (required)`)
      assert.deepStrictEqual(failing!.exec_result, {
        status: "failed",
        content: "it went wrong",
        source: "mcp:calc/fail"
      })
      assert.strictEqual(nothing!.exec_result!.status, "empty")
      assert.strictEqual(trace.outcome, "success")
    }).pipe(Effect.provide(TestLayer({
      config: {
        mcp: { servers: { calc: stdioServer({ readOnlyTools: ["add", "fail", "nothing"] }) } }
      },
      script: [
        { toolCalls: [{ name: "calc__add", args: { a: 2, b: 3 } }] },
        { toolCalls: [{ name: "calc__add", args: { a: "two" } }] },
        { toolCalls: [{ name: "calc__fail", args: {} }] },
        { toolCalls: [{ name: "calc__nothing", args: {} }] },
        { text: "5" }
      ]
    }))))

  it.scoped("a server that crashes is reported down, its tools fail meanwhile, and it is restarted after the backoff", () =>
    Effect.gen(function*() {
      const health = yield* makeHealth
      const first = yield* turn("which process?")
      const [pid, crash] = actions(first)
      assert.strictEqual(pid!.exec_result!.status, "success")
      assert.deepStrictEqual(crash!.exec_result, {
        status: "failed",
        content: "server calc unavailable (restarting): the connection closed during the call"
      })

      const down = yield* awaitState("calc", "down")
      const report = yield* health
      assert.strictEqual(report.status, "degraded")
      assert.include(report.problems, "the MCP server calc is down (restarting)")
      assert.deepInclude(report.mcp.servers[0]!, { name: "calc", transport: "stdio", state: "down", tools: 7 })

      const meanwhile = yield* turn("add while it is down")
      assert.deepStrictEqual(actions(meanwhile)[0]!.exec_result, {
        status: "failed",
        content: "server calc unavailable (restarting)"
      })

      const now = yield* Clock.currentTimeMillis
      assert.strictEqual(down.retryAt! - now, 1_000, "the first restart waits the base delay")
      yield* TestClock.adjust(down.retryAt! - now)
      const up = yield* awaitState("calc", "up")
      assert.strictEqual(up.restarts, 1)
      assert.strictEqual((yield* health).status, "ok")

      const later = yield* turn("which process now?")
      const again = actions(later)[0]!.exec_result!
      assert.strictEqual(again.status, "success")
      assert.notStrictEqual(again.content, pid!.exec_result!.content, "a new process answers")
      const statuses = yield* Effect.flatMap(McpServers, (servers) => servers.status)
      assert.strictEqual(statuses[0]!.state, "up")
    }).pipe(Effect.provide(TestLayer({
      config: {
        mcp: { servers: { calc: stdioServer() }, restart: { baseDelayMs: 1_000, maxDelayMs: 8_000 } },
        policy: { rules: [{ match: "calc__*", decision: "allow" }] }
      },
      // After the first (untrusted) result, a side-effecting call needs the owner: this one says yes.
      approve: () => true,
      script: [
        { toolCalls: [{ name: "calc__pid", args: {} }] },
        { toolCalls: [{ name: "calc__crash", args: {} }] },
        { text: "it crashed" },
        { toolCalls: [{ name: "calc__add", args: { a: 1, b: 1 } }] },
        { text: "unavailable" },
        { toolCalls: [{ name: "calc__pid", args: {} }] },
        { text: "back" }
      ]
    }))))

  it.scoped("a secret in a server's env is resolved at spawn and redacted from what the tool echoes", () =>
    Effect.gen(function*() {
      const trace = yield* turn("show the canary")
      const result = actions(trace)[0]!.exec_result!
      assert.deepStrictEqual(result, {
        status: "success",
        content: "CANARY=[secret:MCP_CANARY]",
        source: "mcp:calc/env"
      })
      assert.notInclude(JSON.stringify(trace), "canary-4d1f0e")
    }).pipe(
      Effect.provide(TestLayer({
        config: {
          mcp: {
            servers: { calc: stdioServer({ env: { CANARY: { secret: "MCP_CANARY" } }, readOnlyTools: ["env"] }) }
          }
        },
        script: [{ toolCalls: [{ name: "calc__env", args: { name: "CANARY" } }] }, { text: "done" }]
      })),
      Effect.provide(SecretsMemory({ MCP_CANARY: "canary-4d1f0e" }))
    ))

  it.scoped("a Streamable HTTP server on 127.0.0.1 works, with a secret header", () =>
    Effect.gen(function*() {
      const { port } = yield* httpServer("tok-93b2")
      const trace = yield* turn("echo hi").pipe(Effect.provide(TestLayer({
        config: {
          mcp: {
            servers: {
              web: {
                url: `http://127.0.0.1:${port}/mcp`,
                headers: { authorization: { secret: "WEB_TOKEN" } },
                readOnlyTools: ["echo"]
              }
            }
          }
        },
        script: [{ toolCalls: [{ name: "web__echo", args: { text: "hi over http" } }] }, { text: "done" }]
      })))
      assert.deepStrictEqual(actions(trace)[0]!.exec_result, {
        status: "success",
        content: "hi over http",
        source: "mcp:web/echo"
      })
    }).pipe(Effect.provide(SecretsMemory({ WEB_TOKEN: "Bearer tok-93b2" }))))

  it.scoped("a server that cannot start leaves its tools out and is reported down; the rest of the catalog works", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      assert.isUndefined(registry.find("calc__add"))
      assert.isDefined(registry.find("fs_read"))
      const [status] = yield* Effect.flatMap(McpServers, (servers) => servers.status)
      assert.deepInclude(status!, { name: "calc", state: "down", tools: 0 })
    }).pipe(
      Effect.provide(TestLayer({
        config: { mcp: { servers: { calc: stdioServer({ env: { CANARY: { secret: "ABSENT" } } }) } } }
      })),
      Effect.provide(SecretsMemory({}))
    ))
})
