import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import { decodeTrace, type ThoughtStep } from "../../src/domain/ExecutionTrace.js"
import { myclaw, workspaceWith } from "../support/Cli.js"
import { localServer } from "../support/LocalServer.js"

const fixture = (path: string): Record<string, unknown> =>
  JSON.parse(NodeFs.readFileSync(`tests/fixtures/${path}`, "utf8"))

/** The recorded tool-call payloads, with the tool renamed to one of ours (`now`, no arguments). */
const openAiCallsNow = () => {
  const body = fixture("openai-chat/nonstream-tool-call.json") as {
    choices: Array<{ message: { tool_calls: Array<{ function: object }> } }>
  }
  body.choices[0]!.message.tool_calls[0]!.function = { name: "now", arguments: "{}" }
  return body
}
const anthropicCallsNow = () => {
  const body = fixture("anthropic/nonstream-tool-use.json") as { content: Array<Record<string, unknown>> }
  body.content[0] = { ...body.content[0], name: "now", input: {} }
  return body
}

const pricing = {
  "gpt-4o-2024-08-06": { inputPerMTok: 2.5, cachedInputPerMTok: 1.25, outputPerMTok: 10 },
  "claude-haiku-4-5-20251001": { inputPerMTok: 1, cachedInputPerMTok: 0.1, outputPerMTok: 5 },
  "claude-sonnet-4-5-20250929": { inputPerMTok: 3, cachedInputPerMTok: 0.3, outputPerMTok: 15 }
}

const chatJson = (home: string) =>
  Effect.gen(function*() {
    const run = yield* myclaw(["chat", "what time is it?", "--json"], {
      MYCLAW_HOME: home,
      OPENAI_API_KEY: "",
      ANTHROPIC_API_KEY: ""
    })
    assert.strictEqual(run.code, 0, run.stderr)
    const trace = yield* decodeTrace(JSON.parse(run.stdout))
    const thoughts = trace.steps.filter((step): step is ThoughtStep => step.kind === "thought")
    return { trace, thoughts }
  })

describe("myclaw chat against real wire formats, chosen by configuration alone", () => {
  it.scoped("an OpenAI-compatible server: tool call, answer, cost from the pricing table", () =>
    Effect.gen(function*() {
      const server = yield* localServer([{ body: openAiCallsNow() }, {
        body: fixture("openai-chat/nonstream-text-plain.json")
      }])
      const home = yield* workspaceWith([], {
        tiers: { frontier: [{ provider: "openai", model: "gpt-4o", baseUrl: `${server.url}/v1` }] },
        pricing
      })
      const { thoughts, trace } = yield* chatJson(home)
      assert.strictEqual(trace.outcome, "success")
      assert.deepStrictEqual(thoughts.map((t) => [t.provider, t.model]), [
        ["openai:gpt-4o", "gpt-4o-2024-08-06"],
        ["openai:gpt-4o", "gpt-4o-2024-08-06"]
      ])
      const expected = thoughts.reduce((sum, t) => sum + (t.prompt_tokens * 2.5 + t.response_tokens * 10) / 1e6, 0)
      assert.strictEqual(thoughts[0]!.prompt_tokens, 76)
      assert.closeTo(trace.cost_usd, expected, 1e-12)
      assert.strictEqual(server.requests[0]!.path, "/v1/chat/completions")
    }))

  it.scoped("an Anthropic-compatible server, by editing only the configuration", () =>
    Effect.gen(function*() {
      const server = yield* localServer([{ body: anthropicCallsNow() }, {
        body: fixture("anthropic/nonstream-text.json")
      }])
      const home = yield* workspaceWith([], {
        tiers: { frontier: [{ provider: "anthropic", model: "claude", baseUrl: server.url }] },
        pricing
      })
      const { thoughts, trace } = yield* chatJson(home)
      assert.strictEqual(trace.outcome, "success")
      assert.strictEqual(thoughts[0]!.provider, "anthropic:claude")
      assert.strictEqual(thoughts[0]!.model, "claude-haiku-4-5-20251001")
      assert.closeTo(thoughts[0]!.cost_usd, (1151 * 1 + 87 * 5) / 1e6, 1e-12)
      assert.strictEqual(server.requests[0]!.path, "/v1/messages")
    }))

  it.scoped("failover is visible in the trace", () =>
    Effect.gen(function*() {
      const failing = yield* localServer([{ status: 503 }, { status: 503 }])
      const backup = yield* localServer([{ body: fixture("anthropic/nonstream-text.json") }])
      const home = yield* workspaceWith([], {
        tiers: {
          frontier: [
            { provider: "openai", model: "gpt-4o", baseUrl: failing.url },
            { provider: "anthropic", model: "claude", baseUrl: backup.url }
          ]
        },
        retries: { max: 1, baseDelayMs: 1 }
      })
      const { thoughts, trace } = yield* chatJson(home)
      assert.strictEqual(trace.outcome, "success")
      assert.strictEqual(thoughts[0]!.provider, "anthropic:claude")
      assert.deepStrictEqual(thoughts[0]!.failed_attempts.map((a) => `${a.provider} ${a.reason}`), [
        "openai:gpt-4o Server",
        "openai:gpt-4o Server"
      ])
    }))

  it.scoped("myclaw doctor makes one completion per provider and reports each", () =>
    Effect.gen(function*() {
      const openai = yield* localServer([{ body: fixture("openai-chat/nonstream-text-plain.json") }])
      const anthropic = yield* localServer([{
        status: 401,
        body: fixture("anthropic/error-401-authentication.issue.json")
      }])
      const home = yield* workspaceWith([], {
        tiers: {
          frontier: [{ provider: "openai", model: "gpt-4o", baseUrl: openai.url }],
          "local-fast": [{ provider: "anthropic", model: "claude", baseUrl: anthropic.url }]
        }
      })
      const run = yield* myclaw(["doctor"], { MYCLAW_HOME: home, ANTHROPIC_API_KEY: "sk-ant-wrong" })
      assert.strictEqual(run.code, 1)
      assert.match(run.stdout, /frontier\s+openai:gpt-4o\s+ok\s+model gpt-4o-2024-08-06/)
      assert.match(run.stdout, /local-fast\s+anthropic:claude\s+FAILED\s+Auth: HTTP 401/)
      assert.notInclude(run.stdout, "sk-ant-wrong")
      assert.strictEqual(anthropic.requests[0]!.headers["x-api-key"], "sk-ant-wrong")
    }))
})
