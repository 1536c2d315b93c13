import { NodeHttpClient } from "@effect/platform-node"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { readFileSync } from "node:fs"
import type { AnthropicProviderConfig } from "../../../src/domain/AppConfig.js"
import type { LlmError } from "../../../src/domain/Errors.js"
import type { LlmRequest, Message } from "../../../src/domain/LlmTypes.js"
import { makeAnthropicProvider } from "../../../src/layers/llm/AnthropicProvider.js"
import { makePricing } from "../../../src/layers/llm/Pricing.js"
import { localServer, type ReceivedRequest, refusedUrl, type Reply } from "../../support/LocalServer.js"
import { recordingTracer } from "../../support/Tracing.js"
import { cutEmojiRequest } from "./support.js"

const fixture = (file: string): string =>
  readFileSync(new URL(`../../fixtures/anthropic/${file}`, import.meta.url), "utf8")
const fixtureJson = (file: string): Record<string, unknown> => JSON.parse(fixture(file))

const apiKey = "sk-ant-api03-test-key-that-must-never-show-up"
const withKey = Option.some(Redacted.make(apiKey))
/** The tier layer enforces it; the adapter only receives it. */
const timeoutMs = 60_000

const config = (baseUrl: string): AnthropicProviderConfig => ({
  provider: "anthropic",
  model: "claude-test",
  baseUrl,
  apiKeyEnv: "ANTHROPIC_API_KEY",
  maxTokens: 1024
})

const weatherSchema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] }

const simpleRequest: LlmRequest = {
  tier: "frontier",
  system: [
    { name: "constitution", text: "Be careful.", stable: true },
    { name: "identity", text: "You are myclaw.", stable: true },
    { name: "tools", text: "Tools: weather.", stable: true },
    { name: "memory", text: "", stable: true },
    { name: "summary", text: "Earlier: nothing.", stable: false }
  ],
  messages: [{ role: "user", content: "Hello" }],
  tools: [{ name: "weather", description: "Current weather", parameters: weatherSchema }]
}

/** Serves `replies` on a loopback server and sends `request` once through a fresh provider. */
const exchange = (
  replies: ReadonlyArray<Reply>,
  request: LlmRequest = simpleRequest,
  key: Option.Option<Redacted.Redacted<string>> = withKey
) =>
  Effect.gen(function*() {
    const server = yield* localServer(replies)
    const provider = yield* makeAnthropicProvider(config(server.url), key)
    const result = yield* Effect.either(provider.generate(request, timeoutMs))
    return { result, requests: server.requests, provider }
  })

const answer = (replies: ReadonlyArray<Reply>, request?: LlmRequest) =>
  Effect.flatMap(
    exchange(replies, request),
    ({ requests, result }) => Effect.map(result, (response) => ({ response, requests }))
  )

const failure = (reply: Reply) => Effect.flatMap(exchange([reply]), ({ result }) => Effect.flip(result))

const sentBody = (requests: ReadonlyArray<ReceivedRequest>, index = 0) => JSON.parse(requests[index]!.body)

const assertKeyHidden = (error: LlmError) => {
  assert.notInclude(error.message, apiKey)
  assert.notInclude(JSON.stringify(error), apiKey)
  assert.notInclude(String(error), apiKey)
}

describe("AnthropicProvider", () => {
  layer(NodeHttpClient.layerUndici)("answers", (it) => {
    it.scoped("a plain answer (nonstream-text.json), sent to /v1/messages with the version and the key", () =>
      Effect.gen(function*() {
        const { requests, response } = yield* answer([{ body: fixture("nonstream-text.json") }])
        assert.deepStrictEqual(response, {
          model: "claude-sonnet-4-5-20250929",
          text:
            "Hello! I'm doing well, thanks for asking. How are you doing today? Is there anything I can help you with?",
          toolCalls: [],
          usage: { input: 12, output: 29, cached: 0, cacheWrite: 0 },
          finishReason: "stop"
        })
        assert.strictEqual(requests.length, 1)
        const [sent] = requests
        assert.strictEqual(sent!.method, "POST")
        assert.strictEqual(sent!.path, "/v1/messages")
        assert.strictEqual(sent!.headers["x-api-key"], apiKey)
        assert.strictEqual(sent!.headers["anthropic-version"], "2023-06-01")
        assert.strictEqual(sent!.headers["content-type"], "application/json")
        const body = sentBody(requests)
        assert.strictEqual(body.model, "claude-test")
        assert.strictEqual(body.max_tokens, 1024)
        assert.deepStrictEqual(body.messages, [{ role: "user", content: "Hello" }])
        assert.deepStrictEqual(body.tools, [
          { name: "weather", description: "Current weather", input_schema: weatherSchema }
        ])
      }))

    it.scoped("one tool use (nonstream-tool-use.json) becomes one tool call with the input as args", () =>
      Effect.gen(function*() {
        const { response } = yield* answer([{ body: fixture("nonstream-tool-use.json") }])
        assert.strictEqual(response.model, "claude-haiku-4-5-20251001")
        assert.strictEqual(response.text, "")
        assert.strictEqual(response.finishReason, "tool_call")
        assert.deepStrictEqual(response.usage, { input: 1151, output: 87, cached: 0, cacheWrite: 0 })
        assert.strictEqual(response.toolCalls.length, 1)
        const [call] = response.toolCalls
        assert.strictEqual(call!.id, "toolu_01Q9ExVZnzZj7E2QQYHYtNUa")
        assert.strictEqual(call!.name, "json")
        assert.deepStrictEqual(call!.args, {
          elements: [
            { location: "San Francisco", temperature: -5, condition: "snowy" },
            { location: "London", temperature: 0, condition: "snowy" },
            { location: "Paris", temperature: 23, condition: "cloudy" },
            { location: "Berlin", temperature: -9, condition: "snowy" }
          ]
        })
        assert.isUndefined(call!.raw_arguments)
      }))

    it.scoped("parallel tool use (nonstream-parallel-tool-use.from-nock.json): the text and both calls, in order", () =>
      Effect.gen(function*() {
        const { response } = yield* answer([{ body: fixture("nonstream-parallel-tool-use.from-nock.json") }])
        assert.strictEqual(
          response.text,
          "I'll use the test_tool twice as requested - first with count 1, then with count 2."
        )
        assert.deepStrictEqual(response.toolCalls, [
          { id: "toolu_01L8GVQapA1HmggQcrwboukH", name: "test_tool", args: { count: 1 } },
          { id: "toolu_01J5Fvzxu7DP1Uh59c1kr5JD", name: "test_tool", args: { count: 2 } }
        ])
        assert.strictEqual(response.finishReason, "tool_call")
        assert.deepStrictEqual(response.usage, { input: 418, output: 113, cached: 0, cacheWrite: 0 })
      }))

    it.scoped("under a tracer that exports, a call is the span AnthropicProvider.generate", () =>
      Effect.gen(function*() {
        const { spans, tracer } = yield* recordingTracer
        yield* answer([{ body: fixture("nonstream-text.json") }]).pipe(Effect.withTracer(tracer))
        assert.deepStrictEqual(
          spans.filter((span) => span.name === "AnthropicProvider.generate").map((span) => span.name),
          ["AnthropicProvider.generate"]
        )
      }))

    it.scoped("stop_reason max_tokens is finish reason length (derived from nonstream-text.json)", () =>
      Effect.gen(function*() {
        const body = { ...fixtureJson("nonstream-text.json"), stop_reason: "max_tokens" }
        const { response } = yield* answer([{ body }])
        assert.strictEqual(response.finishReason, "length")
        assert.isTrue(response.text.startsWith("Hello!"))
      }))

    it.scoped("stop_reason refusal is content_filter; model_context_window_exceeded is length (derived)", () =>
      Effect.gen(function*() {
        const refused = { ...fixtureJson("nonstream-text.json"), stop_reason: "refusal" }
        const full = { ...fixtureJson("nonstream-text.json"), stop_reason: "model_context_window_exceeded" }
        const { response: first } = yield* answer([{ body: refused }])
        assert.strictEqual(first.finishReason, "content_filter")
        const { response: second } = yield* answer([{ body: full }])
        assert.strictEqual(second.finishReason, "length")
      }))

    it.scoped("cache writes and reads are counted as input, reads as cached, and priced so (derived usage)", () =>
      Effect.gen(function*() {
        const text = fixtureJson("nonstream-text.json")
        const usage = text.usage as Record<string, unknown>
        const written = { ...text, usage: { ...usage, cache_creation_input_tokens: 2048, cache_read_input_tokens: 0 } }
        const read = { ...text, usage: { ...usage, cache_creation_input_tokens: 0, cache_read_input_tokens: 2048 } }
        const server = yield* localServer([{ body: written }, { body: read }])
        const provider = yield* makeAnthropicProvider(config(server.url), withKey)
        const first = yield* provider.generate(simpleRequest, timeoutMs)
        const second = yield* provider.generate(simpleRequest, timeoutMs)
        assert.deepStrictEqual(first.usage, { input: 12 + 2048, output: 29, cached: 0, cacheWrite: 2048 })
        assert.deepStrictEqual(second.usage, { input: 12 + 2048, output: 29, cached: 2048, cacheWrite: 0 })
        const price = makePricing({
          "claude-sonnet-4-5-20250929": {
            inputPerMTok: 3,
            cachedInputPerMTok: 0.3,
            outputPerMTok: 15,
            cacheWritePerMTok: 3.75
          }
        })
        const firstCost = price.usd(first.model, first.usage)
        const secondCost = price.usd(second.model, second.usage)
        assert.closeTo(firstCost, (12 * 3 + 2048 * 3.75 + 29 * 15) / 1e6, 1e-12)
        assert.closeTo(secondCost, (12 * 3 + 2048 * 0.3 + 29 * 15) / 1e6, 1e-12)
      }))

    it.scoped("unknown block types (thinking) are skipped; a model-less, usage-less body still answers", () =>
      Effect.gen(function*() {
        const { response } = yield* answer([{
          body: {
            content: [
              { type: "thinking", thinking: "Let me think.", signature: "sig" },
              { type: "text", text: "Four.", citations: null }
            ],
            stop_reason: "end_turn"
          }
        }])
        assert.deepStrictEqual(response, {
          model: "claude-test",
          text: "Four.",
          toolCalls: [],
          usage: { input: 0, output: 0, cached: 0 },
          finishReason: "stop"
        })
      }))
  })

  layer(NodeHttpClient.layerUndici)("the request on the wire", (it) => {
    it.scoped("system blocks in order, empty ones dropped, cache_control exactly on the last stable block", () =>
      Effect.gen(function*() {
        const { requests } = yield* answer([{ body: fixture("nonstream-text.json") }])
        assert.deepStrictEqual(sentBody(requests).system, [
          { type: "text", text: "Be careful." },
          { type: "text", text: "You are myclaw." },
          { type: "text", text: "Tools: weather.", cache_control: { type: "ephemeral" } },
          { type: "text", text: "Earlier: nothing." }
        ])
      }))

    it.scoped("no cache_control when no block is stable; no system, no tools, no key when there are none", () =>
      Effect.gen(function*() {
        const volatile: LlmRequest = {
          ...simpleRequest,
          system: [{ name: "summary", text: "Earlier: nothing.", stable: false }],
          tools: []
        }
        const one = yield* exchange([{ body: fixture("nonstream-text.json") }], volatile, Option.none())
        const body = sentBody(one.requests)
        assert.deepStrictEqual(body.system, [{ type: "text", text: "Earlier: nothing." }])
        assert.isFalse("tools" in body)
        assert.isFalse("x-api-key" in one.requests[0]!.headers)
        const bare = yield* exchange([{ body: fixture("nonstream-text.json") }], { ...volatile, system: [] })
        assert.isFalse("system" in sentBody(bare.requests))
      }))

    it.scoped("a tool_use turn: assistant text + two tool_use blocks, then ONE user message with both results", () =>
      Effect.gen(function*() {
        const messages: ReadonlyArray<Message> = [
          { role: "user", content: "Weather in Rome and Oslo?" },
          {
            role: "assistant",
            content: "Checking both.",
            toolCalls: [
              { id: "toolu_1", name: "weather", args: { city: "Rome" } },
              { id: "toolu_2", name: "weather", args: null, raw_arguments: "{\"city\": \"Oslo" }
            ]
          },
          { role: "tool", toolCallId: "toolu_1", name: "weather", content: "sunny, 24 C", isError: false },
          {
            role: "tool",
            toolCallId: "toolu_2",
            name: "weather",
            content: "The tool call is not valid.",
            isError: true
          },
          { role: "assistant", content: "", toolCalls: [] },
          { role: "user", content: "And tomorrow?" }
        ]
        const { requests } = yield* answer([{ body: fixture("nonstream-text.json") }], {
          ...simpleRequest,
          messages,
          maxTokens: 64
        })
        const body = sentBody(requests)
        assert.strictEqual(body.max_tokens, 64)
        assert.deepStrictEqual(body.messages, [
          { role: "user", content: "Weather in Rome and Oslo?" },
          {
            role: "assistant",
            content: [
              { type: "text", text: "Checking both." },
              { type: "tool_use", id: "toolu_1", name: "weather", input: { city: "Rome" } },
              { type: "tool_use", id: "toolu_2", name: "weather", input: {} }
            ]
          },
          {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: "toolu_1", content: "sunny, 24 C" },
              { type: "tool_result", tool_use_id: "toolu_2", content: "The tool call is not valid.", is_error: true },
              { type: "text", text: "And tomorrow?" }
            ]
          }
        ])
      }))

    it.scoped("a cut emoji (a lone surrogate) goes as U+FFFD: the API refuses a body with one (no low surrogate)", () =>
      Effect.gen(function*() {
        const { requests } = yield* answer([{ body: fixture("nonstream-text.json") }], cutEmojiRequest("toolu_1"))
        const body = sentBody(requests)
        assert.deepStrictEqual(body.system, [{
          type: "text",
          text: "note \ufffd",
          cache_control: { type: "ephemeral" }
        }])
        assert.strictEqual(body.messages[0].content, "ends cut \ufffd")
        assert.strictEqual(body.messages[2].content[0].content, "\ufffd starts cut, 😀 whole")
        assert.deepStrictEqual(body.messages[3].content, [{ type: "text", text: "half \ufffd" }])
      }))

    it.scoped("consecutive user messages are merged into one, tool results first", () =>
      Effect.gen(function*() {
        const { requests } = yield* answer([{ body: fixture("nonstream-text.json") }], {
          ...simpleRequest,
          messages: [
            { role: "user", content: "one" },
            { role: "user", content: "two" },
            {
              role: "assistant",
              content: "",
              toolCalls: [{ id: "toolu_9", name: "weather", args: ["not an object"] }]
            },
            { role: "user", content: "never mind" },
            { role: "tool", toolCallId: "toolu_9", name: "weather", content: "rain", isError: false }
          ]
        })
        assert.deepStrictEqual(sentBody(requests).messages, [
          { role: "user", content: [{ type: "text", text: "one" }, { type: "text", text: "two" }] },
          { role: "assistant", content: [{ type: "tool_use", id: "toolu_9", name: "weather", input: {} }] },
          {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: "toolu_9", content: "rain" },
              { type: "text", text: "never mind" }
            ]
          }
        ])
      }))

    it.scoped("the breakpoint closes the stable prefix: a stable block after a volatile one is not cached", () =>
      Effect.gen(function*() {
        const { requests } = yield* answer([{ body: fixture("nonstream-text.json") }], {
          ...simpleRequest,
          system: [
            { name: "constitution", text: "Be careful.", stable: true },
            { name: "summary", text: "Earlier: nothing.", stable: false },
            { name: "memory", text: "Likes tea.", stable: true }
          ]
        })
        assert.deepStrictEqual(sentBody(requests).system, [
          { type: "text", text: "Be careful.", cache_control: { type: "ephemeral" } },
          { type: "text", text: "Earlier: nothing." },
          { type: "text", text: "Likes tea." }
        ])
      }))
  })

  layer(NodeHttpClient.layerUndici)("failures", (it) => {
    it.scoped("a 400 invalid_request_error: BadRequest with status 400 and the provider's message", () =>
      Effect.gen(function*() {
        const error = yield* failure({ status: 400, body: fixture("error-400-invalid-request.docs.json") })
        assert.strictEqual(error.reason, "BadRequest")
        assert.strictEqual(error.status, 400)
        assert.strictEqual(error.provider, "anthropic:claude-test")
        assert.strictEqual(
          error.message,
          "HTTP 400: invalid_request_error: messages: roles must alternate between \"user\" and \"assistant\""
        )
      }))

    it.scoped("a 429 rate_limit_error with retry-after: RateLimited with retryAfterMs", () =>
      Effect.gen(function*() {
        const error = yield* failure({
          status: 429,
          headers: { "retry-after": "7" },
          body: fixture("error-429-rate-limit.issue.json")
        })
        assert.strictEqual(error.reason, "RateLimited")
        assert.strictEqual(error.status, 429)
        assert.strictEqual(error.retryAfterMs, 7000)
        assert.include(error.message, "rate_limit_error: Number of request tokens has exceeded")
      }))

    it.scoped("a 529 overloaded_error: Server", () =>
      Effect.gen(function*() {
        const error = yield* failure({ status: 529, body: fixture("error-529-overloaded.issue.json") })
        assert.strictEqual(error.reason, "Server")
        assert.strictEqual(error.status, 529)
        assert.strictEqual(error.message, "HTTP 529: overloaded_error: Overloaded")
      }))

    it.scoped("a 401 authentication_error: Auth", () =>
      Effect.gen(function*() {
        const error = yield* failure({ status: 401, body: fixture("error-401-authentication.issue.json") })
        assert.strictEqual(error.reason, "Auth")
        assert.strictEqual(error.message, "HTTP 401: authentication_error: invalid x-api-key")
      }))

    it.scoped("a 400 \"prompt is too long\": ContextTooLong, with the request id", () =>
      Effect.gen(function*() {
        const error = yield* failure({ status: 400, body: fixture("error-400-prompt-too-long.issue.json") })
        assert.strictEqual(error.reason, "ContextTooLong")
        assert.strictEqual(error.status, 400)
        assert.include(error.message, "prompt is too long: 200251 tokens > 200000 maximum")
        assert.include(error.message, "req_011CWdepJvA2D819tdYYq4h7")
      }))

    it.scoped("a non-JSON error body is quoted, truncated to 500 characters", () =>
      Effect.gen(function*() {
        const html = `<html>${"x".repeat(2000)}</html>`
        const error = yield* failure({ status: 502, headers: { "content-type": "text/html" }, body: html })
        assert.strictEqual(error.reason, "Server")
        assert.include(error.message, "<html>xxx")
        assert.include(error.message, "(2013 characters)")
        assert.isBelow(error.message.length, 600)
      }))

    it.scoped("connection refused: Transport", () =>
      Effect.gen(function*() {
        const url = yield* refusedUrl
        const provider = yield* makeAnthropicProvider(config(url), withKey)
        const error = yield* Effect.flip(provider.generate(simpleRequest, timeoutMs))
        assert.strictEqual(error.reason, "Transport")
        assert.isUndefined(error.status)
        assert.include(error.message, "/v1/messages")
        assertKeyHidden(error)
      }))

    it.scoped("a 200 with {} is BadResponse naming the missing content; a non-JSON 200 is BadResponse", () =>
      Effect.gen(function*() {
        const empty = yield* failure({ body: {} })
        assert.strictEqual(empty.reason, "BadResponse")
        assert.strictEqual(empty.message, "unexpected response: content: is missing")
        const garbage = yield* failure({ body: "<html>gateway</html>" })
        assert.strictEqual(garbage.reason, "BadResponse")
        assert.include(garbage.message, "not valid JSON")
        const errorIn200 = yield* failure({ body: fixture("error-529-overloaded.issue.json") })
        assert.strictEqual(errorIn200.reason, "BadResponse")
        assert.include(errorIn200.message, "overloaded_error: Overloaded")
      }))

    it.scoped("a tool_use block without its id is BadResponse, not a call without an id", () =>
      Effect.gen(function*() {
        const error = yield* failure({ body: { content: [{ type: "tool_use", name: "weather", input: {} }] } })
        assert.strictEqual(error.reason, "BadResponse")
        assert.include(error.message, "content.0.id: is missing")
      }))

    it.scoped("the API key never appears in an error, even when the server echoes it", () =>
      Effect.gen(function*() {
        const replies: ReadonlyArray<Reply> = [
          { status: 400, body: fixture("error-400-invalid-request.docs.json") },
          {
            status: 401,
            body: { type: "error", error: { type: "authentication_error", message: `bad key ${apiKey}` } }
          },
          { status: 403, body: `forbidden for ${apiKey}${"!".repeat(600)}` },
          { status: 429, headers: { "retry-after": "1" }, body: fixture("error-429-rate-limit.issue.json") },
          { status: 529, body: fixture("error-529-overloaded.issue.json") },
          { body: { type: "error", error: { type: "api_error", message: apiKey } } },
          { body: {} }
        ]
        const server = yield* localServer(replies)
        const provider = yield* makeAnthropicProvider(config(server.url), withKey)
        const errors = yield* Effect.forEach(replies, () => Effect.flip(provider.generate(simpleRequest, timeoutMs)))
        assert.deepStrictEqual(errors.map((error) => error.reason), [
          "BadRequest",
          "Auth",
          "Auth",
          "RateLimited",
          "Server",
          "BadResponse",
          "BadResponse"
        ])
        errors.forEach(assertKeyHidden)
        assert.include(errors[1]!.message, "bad key <redacted>")
      }))
  })
})
