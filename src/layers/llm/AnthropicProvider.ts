import { HttpClient, HttpClientRequest } from "@effect/platform"
import type { HttpClientError } from "@effect/platform"
import { Clock, Effect, Either, Option, ParseResult, Redacted, Schema } from "effect"
import type { AnthropicProviderConfig } from "../../domain/AppConfig.js"
import { LlmError } from "../../domain/Errors.js"
import type { LlmRequest } from "../../domain/LlmTypes.js"
import { onFirstCall } from "../../domain/OnFirstCall.js"
import { hideSecret, truncateEnd } from "../../domain/Text.js"
import { withSpanWhenTraced } from "../../programs/Spans.js"
import {
  encodeRequest,
  ErrorBody,
  finishReason,
  MessageResponse,
  textOf,
  toolCallsOf,
  usageOf
} from "./AnthropicWire.js"
import { badResponse, hideInError, hideInResponse, statusError, transportError } from "./HttpFailure.js"
import type { Provider, ProviderResponse } from "./Provider.js"

const decodeMessage = onFirstCall(() => Schema.decodeUnknownEither(Schema.parseJson(MessageResponse)))
const decodeError = onFirstCall(() => Schema.decodeUnknownEither(Schema.parseJson(ErrorBody)))

const describeIssues = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .slice(0, 3)
    .map((issue) => (issue.path.length === 0 ? issue.message : `${issue.path.join(".")}: ${issue.message}`))
    .join("; ")

/** The provider's own words: `error.type: error.message` from the typed body, else the raw body. */
const errorText = (body: string): string =>
  Either.match(decodeError(body), {
    onLeft: () => (body.trim() === "" ? "(empty body)" : `${truncateEnd(body, 500)} (${body.length} characters)`),
    onRight: ({ error, request_id }) =>
      `${error.type}: ${error.message}${typeof request_id === "string" ? ` (request_id ${request_id})` : ""}`
  })

/** The Anthropic Messages API (non-streaming); no retries or timeouts here: the tier layer owns them. */
export const makeAnthropicProvider = (
  config: AnthropicProviderConfig,
  apiKey: Option.Option<Redacted.Redacted<string>>
): Effect.Effect<Provider, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const name = `anthropic:${config.model}`
    const client = (yield* HttpClient.HttpClient).pipe(HttpClient.withTracerPropagation(false))
    const url = `${config.baseUrl}/v1/messages`
    const base = HttpClientRequest.post(url, { headers: { "anthropic-version": "2023-06-01" }, acceptJson: true })

    // A server may echo the request in its error body: the key never travels on in one of our messages.
    const hideKey = (text: string): string =>
      Option.match(apiKey, { onNone: () => text, onSome: (key) => hideSecret(Redacted.value(key), "<redacted>")(text) })

    const transport = (error: HttpClientError.HttpClientError, status?: number) =>
      error._tag === "RequestError"
        ? transportError(name, error)
        : new LlmError({ reason: "Transport", provider: name, message: hideKey(error.message), status })

    const decode = (body: string): Effect.Effect<ProviderResponse, LlmError> =>
      Either.match(decodeMessage(body), {
        onLeft: (error) => {
          const detail = Either.isRight(decodeError(body))
            ? `a 2xx with an error body: ${errorText(body)}`
            : describeIssues(error)
          return Effect.fail(badResponse(name, hideKey(detail)))
        },
        onRight: (message) =>
          Effect.succeed({
            model: message.model ?? config.model,
            text: textOf(message.content),
            toolCalls: toolCallsOf(message.content),
            usage: usageOf(message.usage),
            finishReason: finishReason(message.stop_reason)
          })
      })

    // Its span only when a tracer exports spans (Effect.fn would make one, stack trace included, for every call).
    const generate = Effect.fnUntraced(
      function*(request: LlmRequest) {
        const payload = encodeRequest(config.model, request.maxTokens ?? config.maxTokens, request)
        const withKey = Option.match(apiKey, {
          onNone: () => base,
          onSome: (key) => HttpClientRequest.setHeader(base, "x-api-key", Redacted.value(key))
        })
        const httpRequest = yield* HttpClientRequest.bodyJson(withKey, payload).pipe(
          Effect.mapError((error) =>
            new LlmError({
              reason: "BadRequest",
              provider: name,
              message: `cannot encode the request as JSON: ${
                error.reason._tag === "JsonError" ? String(error.reason.error) : error.reason._tag
              }`
            })
          )
        )
        const response = yield* Effect.mapError(client.execute(httpRequest), (error) => transport(error))
        const body = yield* Effect.mapError(response.text, (error) => transport(error, response.status))
        if (response.status < 200 || response.status >= 300) {
          const now = yield* Clock.currentTimeMillis
          return yield* statusError(name, response.status, errorText(hideKey(body)), response.headers, now)
        }
        return yield* decode(body)
      },
      Effect.mapBoth({ onFailure: hideInError(hideKey), onSuccess: hideInResponse(hideKey) }),
      withSpanWhenTraced("AnthropicProvider.generate")
    )

    return { name, model: config.model, generate, maxOutputTokens: config.maxTokens }
  })
