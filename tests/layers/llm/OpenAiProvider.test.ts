import { NodeHttpClient } from "@effect/platform-node"
import { assert, layer } from "@effect/vitest"
import { Effect, Option, Redacted, Schema, TestClock } from "effect"
import { readFileSync } from "node:fs"
import { OpenAiProviderConfig } from "../../../src/domain/AppConfig.js"
import type { LlmError } from "../../../src/domain/Errors.js"
import type { LlmRequest } from "../../../src/domain/LlmTypes.js"
import { makeOpenAiProvider } from "../../../src/layers/llm/OpenAiProvider.js"
import { localServer, type ReceivedRequest, refusedUrl, type Reply } from "../../support/LocalServer.js"
import { recordingTracer } from "../../support/Tracing.js"
import { cutEmojiRequest } from "./support.js"

const KEY = "sk-test-5f3c0e7a9b1d4c2e8f6a"
/** The tier layer enforces timeouts; the provider is handed the budget and does not time itself. */
const TIMEOUT = 60_000

/** A recorded payload from tests/fixtures/openai-chat (PROVENANCE.md), byte for byte. */
const fixture = (file: string): string =>
  readFileSync(new URL(`../../fixtures/openai-chat/${file}`, import.meta.url), "utf8")

interface WireCall {
  [key: string]: unknown
  function: { [key: string]: unknown }
}
interface WireBody {
  [key: string]: unknown
  choices: Array<{ [key: string]: unknown; message: { [key: string]: unknown; tool_calls?: Array<WireCall> } }>
}

/** A variant of a recorded payload: parsed, edited, re-serialised (listed as derived in PROVENANCE.md). */
const derive = (file: string, edit: (body: WireBody, calls: Array<WireCall>) => void): string => {
  const body = JSON.parse(fixture(file)) as WireBody
  edit(body, body.choices[0].message.tool_calls ?? [])
  return JSON.stringify(body)
}

const makeConfig = (baseUrl: string, overrides: Record<string, unknown> = {}) =>
  Schema.decodeUnknownSync(OpenAiProviderConfig)({ provider: "openai", model: "gpt-4o", baseUrl, ...overrides })

const weatherTool = {
  name: "GetWeatherArgs",
  description: "The current weather in a city.",
  parameters: {
    type: "object",
    properties: { city: { type: "string" }, country: { type: "string" }, units: { enum: ["c", "f"] } },
    required: ["city", "country", "units"]
  }
}

const conversation: LlmRequest = {
  tier: "frontier",
  system: [
    { name: "identity", text: "You are myclaw.", stable: true },
    { name: "memory", text: "The user lives in Edinburgh.", stable: false }
  ],
  messages: [
    { role: "user", content: "What's the weather like in Edinburgh, and how is AAPL doing?" },
    {
      role: "assistant",
      content: "",
      toolCalls: [
        { id: "call_a", name: "GetWeatherArgs", args: { city: "Edinburgh", country: "UK", units: "c" } },
        { id: "call_b", name: "get_stock_price", args: null, raw_arguments: "{\"ticker\": AAPL" }
      ]
    },
    { role: "tool", toolCallId: "call_a", name: "GetWeatherArgs", content: "12°C, rain", isError: false },
    {
      role: "tool",
      toolCallId: "call_b",
      name: "get_stock_price",
      content: "the arguments are not valid JSON",
      isError: true
    },
    {
      role: "assistant",
      content: "It is 12°C and raining. Let me retry the stock price.",
      toolCalls: [{ id: "call_c", name: "get_stock_price", args: { ticker: "AAPL" } }]
    },
    { role: "tool", toolCallId: "call_c", name: "get_stock_price", content: "AAPL 227.52", isError: false },
    { role: "assistant", content: "AAPL is at 227.52.", toolCalls: [] },
    { role: "user", content: "Thanks" }
  ],
  tools: [weatherTool]
}

const question: LlmRequest = {
  tier: "local-fast",
  system: [],
  messages: [{ role: "user", content: "What's the weather like in SF?" }],
  tools: []
}

/** Serves `replies` on a fresh loopback server and returns a provider pointed at `${url}/v1` with the key. */
const serve = (replies: ReadonlyArray<Reply>, overrides: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const server = yield* localServer(replies)
    const provider = yield* makeOpenAiProvider(
      makeConfig(`${server.url}/v1`, overrides),
      Option.some(Redacted.make(KEY))
    )
    return { provider, requests: server.requests }
  })

const answer = (body: string, request: LlmRequest = question) =>
  Effect.flatMap(serve([{ body }]), ({ provider }) => provider.generate(request, TIMEOUT))

/** The LlmError of one call; every failure is typed, names the provider and never carries the key. */
const failure = (reply: Reply) =>
  Effect.gen(function*() {
    const { provider } = yield* serve([reply])
    const error = yield* Effect.flip(provider.generate(question, TIMEOUT))
    assertSafe(error)
    return error
  })

const assertSafe = (error: LlmError) => {
  assert.strictEqual(error._tag, "LlmError")
  assert.strictEqual(error.provider, "openai:gpt-4o")
  assert.notInclude(error.message, KEY)
}

const sentBody = (request: ReceivedRequest): unknown => JSON.parse(request.body)

layer(NodeHttpClient.layerUndici)("OpenAiProvider: the request on the wire", (it) => {
  it.scoped("POSTs system, user, assistant tool calls, tool results and tools to {baseUrl}/chat/completions", () =>
    Effect.gen(function*() {
      const { provider, requests } = yield* serve([{ body: fixture("nonstream-text-plain.json") }])
      assert.strictEqual(provider.name, "openai:gpt-4o")
      assert.strictEqual(provider.model, "gpt-4o")
      yield* provider.generate(conversation, TIMEOUT)
      assert.strictEqual(requests.length, 1)
      const [sent] = requests
      assert.strictEqual(sent.method, "POST")
      assert.strictEqual(sent.path, "/v1/chat/completions")
      assert.strictEqual(sent.headers.authorization, `Bearer ${KEY}`)
      assert.match(sent.headers["content-type"] ?? "", /^application\/json/)
      assert.deepStrictEqual(sentBody(sent), {
        model: "gpt-4o",
        messages: [
          { role: "system", content: "You are myclaw.\n\nThe user lives in Edinburgh." },
          { role: "user", content: "What's the weather like in Edinburgh, and how is AAPL doing?" },
          {
            role: "assistant",
            content: null,
            tool_calls: [
              {
                id: "call_a",
                type: "function",
                function: {
                  name: "GetWeatherArgs",
                  arguments: "{\"city\":\"Edinburgh\",\"country\":\"UK\",\"units\":\"c\"}"
                }
              },
              { id: "call_b", type: "function", function: { name: "get_stock_price", arguments: "{\"ticker\": AAPL" } }
            ]
          },
          { role: "tool", tool_call_id: "call_a", content: "12°C, rain" },
          { role: "tool", tool_call_id: "call_b", content: "the arguments are not valid JSON" },
          {
            role: "assistant",
            content: "It is 12°C and raining. Let me retry the stock price.",
            tool_calls: [{
              id: "call_c",
              type: "function",
              function: { name: "get_stock_price", arguments: "{\"ticker\":\"AAPL\"}" }
            }]
          },
          { role: "tool", tool_call_id: "call_c", content: "AAPL 227.52" },
          { role: "assistant", content: "AAPL is at 227.52." },
          { role: "user", content: "Thanks" }
        ],
        tools: [{ type: "function", function: weatherTool }],
        max_tokens: 4096
      })
    }))

  it.scoped("a cut emoji (a lone surrogate) goes as U+FFFD, never as an escape a strict JSON parser refuses", () =>
    Effect.gen(function*() {
      const { provider, requests } = yield* serve([{ body: fixture("nonstream-text-plain.json") }])
      yield* provider.generate(cutEmojiRequest("call_a"), TIMEOUT)
      const body = sentBody(requests[0]!) as { messages: ReadonlyArray<{ content: string }> }
      assert.deepStrictEqual(body.messages.map((message) => message.content), [
        "note \ufffd",
        "ends cut \ufffd",
        null,
        "\ufffd starts cut, 😀 whole",
        "half \ufffd"
      ])
    }))

  it.scoped("without a key sends no Authorization; no system or tools keys when empty; the configured max field", () =>
    Effect.gen(function*() {
      const server = yield* localServer([{ body: fixture("nonstream-text-plain.json") }])
      const config = makeConfig(`${server.url}/v1`, { maxTokensField: "max_completion_tokens", maxTokens: 1000 })
      const provider = yield* makeOpenAiProvider(config, Option.none())
      yield* provider.generate({ ...question, maxTokens: 256 }, TIMEOUT)
      const [sent] = server.requests
      assert.strictEqual(sent.path, "/v1/chat/completions")
      assert.isUndefined(sent.headers.authorization)
      assert.deepStrictEqual(sentBody(sent), {
        model: "gpt-4o",
        messages: [{ role: "user", content: "What's the weather like in SF?" }],
        max_completion_tokens: 256
      })
    }))
})

layer(NodeHttpClient.layerUndici)("OpenAiProvider: recorded responses", (it) => {
  it.scoped("under a tracer that exports, a call is the span OpenAiProvider.generate, with its provider", () =>
    Effect.gen(function*() {
      const { spans, tracer } = yield* recordingTracer
      yield* answer(fixture("nonstream-text-plain.json")).pipe(Effect.withTracer(tracer))
      const [span] = spans.filter((span) => span.name === "OpenAiProvider.generate")
      assert.strictEqual(span?.attributes.get("provider"), "openai:gpt-4o")
    }))

  it.scoped("a plain answer (nonstream-text-plain.json)", () =>
    Effect.gen(function*() {
      const response = yield* answer(fixture("nonstream-text-plain.json"))
      assert.deepStrictEqual(response, {
        model: "gpt-4o-2024-08-06",
        text: "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, " +
          "I recommend checking a reliable weather website or app like the Weather Channel or a local news station.",
        toolCalls: [],
        usage: { input: 14, output: 37, cached: 0 },
        finishReason: "stop"
      })
    }))

  it.scoped("one tool call (nonstream-tool-call.json)", () =>
    Effect.gen(function*() {
      const response = yield* answer(fixture("nonstream-tool-call.json"))
      assert.deepStrictEqual(response, {
        model: "gpt-4o-2024-08-06",
        text: "",
        toolCalls: [{
          id: "call_Y6qJ7ofLgOrBnMD5WbVAeiRV",
          name: "GetWeatherArgs",
          args: { city: "Edinburgh", country: "UK", units: "c" }
        }],
        usage: { input: 76, output: 24, cached: 0 },
        finishReason: "tool_call"
      })
    }))

  it.scoped("parallel tool calls (nonstream-parallel-tool-calls.json)", () =>
    Effect.gen(function*() {
      const response = yield* answer(fixture("nonstream-parallel-tool-calls.json"))
      assert.deepStrictEqual(response.toolCalls, [
        {
          id: "call_fdNz3vOBKYgOIpMdWotB9MjY",
          name: "GetWeatherArgs",
          args: { city: "Edinburgh", country: "GB", units: "c" }
        },
        { id: "call_h1DWI1POMJLb0KwIyQHWXD4p", name: "get_stock_price", args: { ticker: "AAPL", exchange: "NASDAQ" } }
      ])
      assert.strictEqual(response.text, "")
      assert.strictEqual(response.finishReason, "tool_call")
      assert.deepStrictEqual(response.usage, { input: 149, output: 60, cached: 0 })
    }))

  it.scoped("finish_reason length (nonstream-finish-length.json)", () =>
    Effect.gen(function*() {
      const response = yield* answer(fixture("nonstream-finish-length.json"))
      assert.strictEqual(response.text, "{\"")
      assert.strictEqual(response.finishReason, "length")
      assert.deepStrictEqual(response.usage, { input: 79, output: 1, cached: 0 })
    }))

  it.scoped("arguments that are not valid JSON reach the result as a call with raw_arguments", () =>
    Effect.gen(function*() {
      const truncated = "{\"city\":\"Edinburgh\",\"country\":"
      const response = yield* answer(derive("nonstream-tool-call.json", (_, [call]) => {
        call.function.arguments = truncated
      }))
      assert.deepStrictEqual(response.toolCalls, [
        { id: "call_Y6qJ7ofLgOrBnMD5WbVAeiRV", name: "GetWeatherArgs", args: null, raw_arguments: truncated }
      ])
      assert.strictEqual(response.finishReason, "tool_call")
      assert.deepStrictEqual(response.usage, { input: 76, output: 24, cached: 0 })
    }))
})

layer(NodeHttpClient.layerUndici)("OpenAiProvider: tolerant decoding", (it) => {
  it.scoped("no `type`, indexes starting at 3 and unknown fields on tool calls", () =>
    Effect.gen(function*() {
      const response = yield* answer(derive("nonstream-parallel-tool-calls.json", (_, calls) => {
        calls.forEach((call, i) => {
          delete call.type
          call.index = 3 + i
          call.vendor_extension = { trace: i }
        })
      }))
      assert.deepStrictEqual(response.toolCalls.map((call) => [call.id, call.name]), [
        ["call_fdNz3vOBKYgOIpMdWotB9MjY", "GetWeatherArgs"],
        ["call_h1DWI1POMJLb0KwIyQHWXD4p", "get_stock_price"]
      ])
      assert.strictEqual(response.finishReason, "tool_call")
    }))

  it.scoped("arguments given as an object, or empty, are decoded args", () =>
    Effect.gen(function*() {
      const response = yield* answer(derive("nonstream-parallel-tool-calls.json", (_, [weather, stock]) => {
        weather.function.arguments = { city: "Edinburgh", country: "GB", units: "c" }
        stock.function.arguments = ""
      }))
      assert.deepStrictEqual(response.toolCalls, [
        {
          id: "call_fdNz3vOBKYgOIpMdWotB9MjY",
          name: "GetWeatherArgs",
          args: { city: "Edinburgh", country: "GB", units: "c" }
        },
        { id: "call_h1DWI1POMJLb0KwIyQHWXD4p", name: "get_stock_price", args: {} }
      ])
    }))

  it.scoped("tool calls without an id get call_<n>, unique across the provider's calls", () =>
    Effect.gen(function*() {
      const noIds = derive("nonstream-parallel-tool-calls.json", (_, calls) => {
        for (const call of calls) delete call.id
      })
      const { provider } = yield* serve([{ body: noIds }, { body: noIds }])
      const first = yield* provider.generate(question, TIMEOUT)
      const second = yield* provider.generate(question, TIMEOUT)
      assert.deepStrictEqual(first.toolCalls.map((call) => call.id), ["call_1", "call_2"])
      assert.deepStrictEqual(second.toolCalls.map((call) => call.id), ["call_3", "call_4"])
      assert.deepStrictEqual(first.toolCalls[1].args, { ticker: "AAPL", exchange: "NASDAQ" })
    }))

  it.scoped("no usage and no model: zero tokens and the configured model", () =>
    Effect.gen(function*() {
      const response = yield* answer(derive("nonstream-text-plain.json", (body) => {
        delete body.usage
        delete body.model
      }))
      assert.deepStrictEqual(response.usage, { input: 0, output: 0, cached: 0 })
      assert.strictEqual(response.model, "gpt-4o")
    }))

  it.scoped("cached prompt tokens are read from prompt_tokens_details", () =>
    Effect.gen(function*() {
      const response = yield* answer(derive("nonstream-text-plain.json", (body) => {
        body.usage = { prompt_tokens: 2006, completion_tokens: 300, prompt_tokens_details: { cached_tokens: 1920 } }
      }))
      assert.deepStrictEqual(response.usage, { input: 2006, output: 300, cached: 1920 })
    }))

  it.scoped("content absent, null or in text parts", () =>
    Effect.gen(function*() {
      const absent = yield* answer(derive("nonstream-tool-call.json", (body) => {
        delete body.choices[0].message.content
      }))
      assert.strictEqual(absent.text, "")
      const parts = yield* answer(derive("nonstream-text-plain.json", (body) => {
        body.choices[0].message.content = [{ type: "text", text: "Sunny, " }, { type: "text", text: "18°C." }]
      }))
      assert.strictEqual(parts.text, "Sunny, 18°C.")
    }))

  it.scoped("finish_reason: function_call, content_filter, null with and without tool calls", () =>
    Effect.gen(function*() {
      const withReason = (file: string, reason: string | null) =>
        Effect.map(
          answer(derive(file, (body) => {
            body.choices[0].finish_reason = reason
          })),
          (response) => response.finishReason
        )
      assert.strictEqual(yield* withReason("nonstream-tool-call.json", "function_call"), "tool_call")
      assert.strictEqual(yield* withReason("nonstream-tool-call.json", null), "tool_call")
      assert.strictEqual(yield* withReason("nonstream-text-plain.json", null), "other")
      assert.strictEqual(yield* withReason("nonstream-text-plain.json", "content_filter"), "content_filter")
      assert.strictEqual(yield* withReason("nonstream-text-plain.json", "something_new"), "other")
    }))
})

layer(NodeHttpClient.layerUndici)("OpenAiProvider: failures are typed LlmErrors", (it) => {
  it.scoped("a 400 error body is surfaced with its code and param (error-400-unsupported-parameter.json)", () =>
    Effect.gen(function*() {
      const error = yield* failure({ status: 400, body: fixture("error-400-unsupported-parameter.json") })
      assert.strictEqual(error.reason, "BadRequest")
      assert.strictEqual(error.status, 400)
      assert.include(error.message, "Unsupported parameter: 'max_tokens' is not supported with this model.")
      assert.include(error.message, "code: unsupported_parameter")
      assert.include(error.message, "param: max_tokens")
    }))

  it.scoped("a 429 with retry-after: 7 is RateLimited with retryAfterMs 7000", () =>
    Effect.gen(function*() {
      const error = yield* failure({
        status: 429,
        headers: { "retry-after": "7" },
        body: {
          error: {
            message: "Rate limit reached for gpt-4o in organization org-test on requests per min (RPM): Limit 3.",
            type: "requests",
            param: null,
            code: "rate_limit_exceeded"
          }
        }
      })
      assert.strictEqual(error.reason, "RateLimited")
      assert.strictEqual(error.status, 429)
      assert.strictEqual(error.retryAfterMs, 7000)
      assert.include(error.message, "code: rate_limit_exceeded")
    }))

  it.scoped("retry-after-ms wins, and an HTTP-date retry-after is measured from the Effect clock", () =>
    Effect.gen(function*() {
      const millis = yield* failure({ status: 429, headers: { "retry-after-ms": "1500", "retry-after": "2" } })
      assert.strictEqual(millis.retryAfterMs, 1500)
      yield* TestClock.setTime(Date.parse("2025-03-14T12:00:00Z"))
      const dated = yield* failure({ status: 503, headers: { "retry-after": "Fri, 14 Mar 2025 12:00:30 GMT" } })
      assert.strictEqual(dated.reason, "Server")
      assert.strictEqual(dated.retryAfterMs, 30_000)
    }))

  it.scoped("a 500 is Server, with the raw body when it is not a typed error (truncated to 500 chars)", () =>
    Effect.gen(function*() {
      const plain = yield* failure({ status: 500, body: "upstream connect error or disconnect/reset before headers" })
      assert.strictEqual(plain.reason, "Server")
      assert.strictEqual(plain.status, 500)
      assert.include(plain.message, "upstream connect error or disconnect/reset before headers")
      const page = `<html>${"x".repeat(2000)}</html>`
      const long = yield* failure({ status: 502, headers: { "content-type": "text/html" }, body: page })
      assert.strictEqual(long.reason, "Server")
      assert.include(long.message, page.slice(0, 500))
      assert.notInclude(long.message, page.slice(0, 501))
    }))

  it.scoped("a 401 is Auth, and a key echoed back by the server is redacted", () =>
    Effect.gen(function*() {
      const error = yield* failure({
        status: 401,
        body: {
          error: {
            message: `Incorrect API key provided: ${KEY}.`,
            type: "invalid_request_error",
            code: "invalid_api_key"
          }
        }
      })
      assert.strictEqual(error.reason, "Auth")
      assert.strictEqual(error.status, 401)
      assert.include(error.message, "Incorrect API key provided: [redacted].")
    }))

  it.scoped("a context_length_exceeded 400 is ContextTooLong", () =>
    Effect.gen(function*() {
      const error = yield* failure({
        status: 400,
        body: {
          error: {
            message: "This model's maximum context length is 128000 tokens. However, your messages resulted in " +
              "204308 tokens. Please reduce the length of the messages.",
            type: "invalid_request_error",
            param: "messages",
            code: "context_length_exceeded"
          }
        }
      })
      assert.strictEqual(error.reason, "ContextTooLong")
      assert.strictEqual(error.status, 400)
    }))

  it.scoped("connection refused, or dropped before answering, is Transport", () =>
    Effect.gen(function*() {
      const url = yield* refusedUrl
      const provider = yield* makeOpenAiProvider(makeConfig(`${url}/v1`), Option.some(Redacted.make(KEY)))
      const refused = yield* Effect.flip(provider.generate(question, TIMEOUT))
      assertSafe(refused)
      assert.strictEqual(refused.reason, "Transport")
      assert.isUndefined(refused.status)
      assert.include(refused.message, `${url}/v1/chat/completions`)
      const dropped = yield* failure({ destroy: true })
      assert.strictEqual(dropped.reason, "Transport")
    }))

  it.scoped("a 2xx body that is not JSON is BadResponse", () =>
    Effect.gen(function*() {
      const error = yield* failure({ status: 200, headers: { "content-type": "text/html" }, body: "<html>hi</html>" })
      assert.strictEqual(error.reason, "BadResponse")
      assert.include(error.message, "not JSON")
      assert.include(error.message, "<html>hi</html>")
    }))

  it.scoped("a 2xx body without choices[0].message is BadResponse naming what is missing", () =>
    Effect.gen(function*() {
      const empty = yield* failure({ body: {} })
      assert.strictEqual(empty.reason, "BadResponse")
      assert.include(empty.message, "choices[0].message")
      const noChoices = yield* failure({ body: { choices: [] } })
      assert.include(noChoices.message, "`choices` is empty")
      const noMessage = yield* failure({ body: { choices: [{ index: 0, finish_reason: "stop" }] } })
      assert.include(noMessage.message, "choices[0] has no `message`")
    }))

  it.scoped("a 2xx error envelope or a malformed message is BadResponse with the detail", () =>
    Effect.gen(function*() {
      const envelope = yield* failure({ body: { error: { message: "Provider returned error", code: 502 } } })
      assert.strictEqual(envelope.reason, "BadResponse")
      assert.include(envelope.message, "the provider said: Provider returned error (code: 502)")
      const nameless = yield* failure({
        body: derive("nonstream-tool-call.json", (_, [call]) => {
          delete call.function.name
        })
      })
      assert.strictEqual(nameless.reason, "BadResponse")
      assert.include(nameless.message, "choices.0.message.tool_calls.0.function.name")
    }))
})
