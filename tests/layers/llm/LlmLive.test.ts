import { NodeContext, NodeHttpClient } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Logger, LogLevel, Schema } from "effect"
import * as NodeFs from "node:fs"
import { AppConfig } from "../../../src/domain/AppConfig.js"
import { BudgetMemory } from "../../../src/layers/budget/BudgetMemory.js"
import { IdGeneratorLive } from "../../../src/layers/ids/IdGeneratorLive.js"
import { LlmLive } from "../../../src/layers/llm/LlmLive.js"
import { MyclawConfigFixed } from "../../../src/layers/MyclawConfigLive.js"
import { TestLayer } from "../../../src/layers/Test.js"
import { AgentRuntime } from "../../../src/services/AgentRuntime.js"
import { Llm } from "../../../src/services/Llm.js"
import { localServer, refusedUrl } from "../../support/LocalServer.js"

const fixture = (path: string): object => JSON.parse(NodeFs.readFileSync(`tests/fixtures/${path}`, "utf8"))
const request = { tier: "frontier", system: [], messages: [{ role: "user", content: "hi" }], tools: [] } as const

/** LlmLive from a configuration, over a real HTTP client, with `env` as the environment. */
const llmFrom = (config: Partial<typeof AppConfig.Encoded>, env: Record<string, string> = {}) =>
  LlmLive.pipe(
    Layer.provide(BudgetMemory.pipe(Layer.provide(IdGeneratorLive))),
    Layer.provideMerge(
      MyclawConfigFixed(Schema.decodeUnknownSync(AppConfig)({ retries: { max: 1, baseDelayMs: 1 }, ...config }))
    ),
    Layer.provide(Layer.merge(NodeContext.layer, NodeHttpClient.layerUndici)),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))),
    Layer.provide(Logger.minimumLogLevel(LogLevel.None))
  )

/** No test here sets a budget that could refuse: a refusal would be a bug, so it dies. */
const generate = Effect.flatMap(Llm, (llm) => llm.generate(request)).pipe(
  Effect.catchTag("BudgetExceeded", (refused) => Effect.die(refused))
)

describe("LlmLive over local servers speaking the real wire formats", () => {
  it.scopedLive("a 500 from the first provider fails over to the second, and the answer says so", () =>
    Effect.gen(function*() {
      const openai = yield* localServer([{ status: 500, body: { error: { message: "boom" } } }, { status: 500 }])
      const anthropic = yield* localServer([{ body: fixture("anthropic/nonstream-text.json") }])
      const response = yield* generate.pipe(Effect.provide(llmFrom({
        tiers: {
          frontier: [
            { provider: "openai", model: "gpt-4o", baseUrl: openai.url },
            { provider: "anthropic", model: "claude", baseUrl: anthropic.url }
          ],
          "local-fast": []
        }
      })))
      assert.strictEqual(response.provider, "anthropic:claude")
      assert.deepStrictEqual(response.failedAttempts.map((a) => `${a.provider} ${a.reason}`), [
        "openai:gpt-4o Server",
        "openai:gpt-4o Server"
      ])
      assert.include(response.failedAttempts[0]!.message, "boom")
      assert.strictEqual(openai.requests.length, 2)
    }))

  it.scopedLive("a 401 with the key variable unset names the variable and where the configuration names it", () =>
    Effect.gen(function*() {
      const openai = yield* localServer([{ status: 401, body: { error: { message: "Incorrect API key provided" } } }])
      const error = yield* Effect.flip(generate.pipe(Effect.provide(llmFrom({
        tiers: {
          frontier: [{ provider: "openai", model: "gpt-4o", baseUrl: openai.url, apiKeyEnv: "MYCLAW_TEST_KEY" }],
          "local-fast": []
        }
      }))))
      if (error._tag !== "LlmError") return assert.fail(`expected an LlmError, got ${error._tag}`)
      assert.strictEqual(error.reason, "Auth")
      assert.include(error.message, "MYCLAW_TEST_KEY (named by tiers.frontier[0].apiKeyEnv) is not set")
      const keyed = yield* localServer([{ status: 401, body: { error: { message: "Incorrect API key provided" } } }])
      const wrongKey = yield* Effect.flip(generate.pipe(Effect.provide(llmFrom({
        tiers: {
          frontier: [{ provider: "openai", model: "gpt-4o", baseUrl: keyed.url, apiKeyEnv: "MYCLAW_TEST_KEY" }],
          "local-fast": []
        }
      }, { MYCLAW_TEST_KEY: "sk-wrong" }))))
      assert.notInclude(wrongKey.message, "is not set", "a key that is set but wrong is the provider's word")
    }))

  it.scopedLive("common models are priced without a pricing section; a model with no price is warned about", () =>
    Effect.gen(function*() {
      const openai = yield* localServer([{ body: fixture("openai-chat/nonstream-text-plain.json") }])
      const logs: Array<string> = []
      const collect = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ message }) => logs.push([message].flat().join(" ")))
      )
      const response = yield* generate.pipe(
        Effect.provide(LlmLive.pipe(
          Layer.provide(BudgetMemory.pipe(Layer.provide(IdGeneratorLive))),
          Layer.provideMerge(MyclawConfigFixed(
            Schema.decodeUnknownSync(AppConfig)({
              tiers: {
                frontier: [{ provider: "openai", model: "gpt-4o", baseUrl: openai.url, apiKeyEnv: "MYCLAW_TEST_KEY" }],
                "local-fast": [{ provider: "openai", model: "my-local-llama", baseUrl: openai.url }]
              }
            })
          )),
          Layer.provide(Layer.merge(NodeContext.layer, NodeHttpClient.layerUndici)),
          Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["MYCLAW_TEST_KEY", "sk-test"]])))),
          Layer.provide(collect)
        ))
      )
      assert.closeTo(response.costUsd, (14 * 2.5 + 37 * 10) / 1e6, 1e-12)
      const warned = logs.filter((line) => line.startsWith("no price for model"))
      assert.deepStrictEqual(warned.map((line) => line.split(":")[0]), [
        "no price for model my-local-llama (tiers.local-fast[0])"
      ])
    }))

  it.scopedLive("connection refused fails over to the next provider", () =>
    Effect.gen(function*() {
      const dead = yield* refusedUrl
      const openai = yield* localServer([{ body: fixture("openai-chat/nonstream-text-plain.json") }])
      const response = yield* generate.pipe(Effect.provide(llmFrom({
        tiers: {
          frontier: [
            { provider: "openai", model: "dead", baseUrl: dead },
            { provider: "openai", model: "alive", baseUrl: openai.url }
          ],
          "local-fast": []
        }
      })))
      assert.strictEqual(response.provider, "openai:alive")
      assert.deepStrictEqual(response.failedAttempts.map((a) => a.reason), ["Transport", "Transport"])
    }))

  it.scopedLive("a 429 with retry-after is retried on the same provider, then succeeds", () =>
    Effect.gen(function*() {
      const openai = yield* localServer([
        {
          status: 429,
          headers: { "retry-after": "0" },
          body: { error: { message: "Rate limit reached", type: "requests" } }
        },
        { body: fixture("openai-chat/nonstream-text-plain.json") }
      ])
      const response = yield* generate.pipe(Effect.provide(llmFrom({
        tiers: { frontier: [{ provider: "openai", model: "gpt-4o", baseUrl: openai.url }], "local-fast": [] }
      })))
      assert.strictEqual(response.failedAttempts[0]!.reason, "RateLimited")
      assert.strictEqual(openai.requests.length, 2)
    }))

  it.scopedLive("a 400 is not retried and carries the provider's message", () =>
    Effect.gen(function*() {
      const openai = yield* localServer([{
        status: 400,
        body: fixture("openai-chat/error-400-unsupported-parameter.json")
      }])
      const error = yield* Effect.flip(generate).pipe(Effect.provide(llmFrom({
        tiers: { frontier: [{ provider: "openai", model: "o1", baseUrl: openai.url }], "local-fast": [] }
      })))
      assert.strictEqual(error.reason, "BadRequest")
      assert.include(error.message, "Unsupported parameter: 'max_tokens'")
      assert.strictEqual(openai.requests.length, 1)
    }))

  it.scopedLive("the API key comes from the variable named in the configuration, never into an error", () =>
    Effect.gen(function*() {
      const openai = yield* localServer([{
        status: 401,
        body: { error: { message: "Incorrect API key provided: sk-test-123" } }
      }])
      const error = yield* Effect.flip(generate).pipe(Effect.provide(llmFrom({
        tiers: {
          frontier: [{ provider: "openai", model: "m", baseUrl: openai.url, apiKeyEnv: "MY_KEY" }],
          "local-fast": []
        }
      }, { MY_KEY: "sk-test-123" })))
      assert.strictEqual(openai.requests[0]!.headers.authorization, "Bearer sk-test-123")
      assert.strictEqual(error.reason, "Auth")
      assert.notInclude(error.message, "sk-test-123")
    }))

  for (const provider of ["openai", "anthropic"] as const) {
    it.scopedLive(`a key the ${provider} server echoes \\u-escaped in JSON is hidden after decoding too`, () =>
      Effect.gen(function*() {
        const escaped = "\\u0073k-\\u0074est-123"
        const body = provider === "openai"
          ? `{"error":{"message":"Incorrect API key provided: ${escaped}","type":"invalid_request_error"}}`
          : `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key: ${escaped}"}}`
        const server = yield* localServer([{ status: 401, body }, { status: 200, body: `{"bad": "${escaped}"}` }])
        for (let i = 0; i < 2; i++) {
          const error = yield* Effect.flip(generate).pipe(Effect.provide(llmFrom({
            retries: { max: 0, baseDelayMs: 1 },
            tiers: {
              frontier: [{ provider, model: "m", baseUrl: server.url, apiKeyEnv: "MY_KEY" }],
              "local-fast": []
            }
          }, { MY_KEY: "sk-test-123" })))
          const shown = [error.message, ...(error.attempts ?? []).map((attempt) => attempt.message)].join("\n")
          if (i === 0) assert.include(shown, "redacted")
          assert.notInclude(shown, "sk-test-123")
          assert.notMatch(shown, /u0073k/)
        }
      }))
  }

  for (const provider of ["openai", "anthropic"] as const) {
    it.scopedLive(`a key the ${provider} model repeats in its answer does not reach the trace`, () =>
      Effect.gen(function*() {
        const said = "your key is \\u0073k-test-123, and sk-test-123"
        const body = provider === "openai"
          ? `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant",` +
            `"content":"${said}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`
          : `{"id":"m","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"${said}"}],` +
            `"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`
        const server = yield* localServer([{ status: 200, body }])
        const response = yield* generate.pipe(Effect.provide(llmFrom({
          tiers: { frontier: [{ provider, model: "m", baseUrl: server.url, apiKeyEnv: "MY_KEY" }], "local-fast": [] }
        }, { MY_KEY: "sk-test-123" })))
        assert.strictEqual(
          response.text,
          "your key is [redacted], and [redacted]".replace(
            /\[redacted\]/g,
            provider === "openai" ? "[redacted]" : "<redacted>"
          )
        )
      }))
  }

  it.scopedLive("cost in the trace matches the pricing table for the recorded usage, Anthropic cache reads included", () =>
    Effect.gen(function*() {
      const cached = {
        ...fixture("anthropic/nonstream-text.json"),
        usage: { input_tokens: 100, cache_read_input_tokens: 2000, cache_creation_input_tokens: 0, output_tokens: 50 }
      }
      const anthropic = yield* localServer([{ body: cached }])
      const runtime = TestLayer({
        llm: LlmLive,
        config: {
          tiers: { frontier: [{ provider: "anthropic", model: "claude", baseUrl: anthropic.url }], "local-fast": [] },
          pricing: { "claude-sonnet-4-5-20250929": { inputPerMTok: 3, cachedInputPerMTok: 0.3, outputPerMTok: 15 } }
        }
      })
      const trace = yield* Effect.flatMap(
        AgentRuntime,
        (agent) => agent.handle({ userMessage: "hi", sessionId: "s", channel: "test" })
      )
        .pipe(Effect.provide(runtime))
      const [thought] = trace.steps
      assert.strictEqual(thought!.kind, "thought")
      if (thought!.kind !== "thought") return
      assert.strictEqual(thought.prompt_tokens, 2100)
      assert.strictEqual(thought.cached_tokens, 2000)
      assert.closeTo(trace.cost_usd, (100 * 3 + 2000 * 0.3 + 50 * 15) / 1e6, 1e-12)
      const sent = JSON.parse(anthropic.requests[0]!.body) as { system: Array<{ cache_control?: unknown }> }
      assert.deepStrictEqual(sent.system.at(-1)!.cache_control, { type: "ephemeral" })
    }))
})
