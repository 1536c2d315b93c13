import { HttpClient, type HttpClientError, HttpClientRequest } from "@effect/platform"
import { Clock, Effect, Either, Option, ParseResult, Redacted, Schema } from "effect"
import type { OpenAiProviderConfig } from "../../domain/AppConfig.js"
import { LlmError } from "../../domain/Errors.js"
import type { FinishReason } from "../../domain/ExecutionTrace.js"
import type { LlmRequest } from "../../domain/LlmTypes.js"
import { onFirstCall } from "../../domain/OnFirstCall.js"
import { hideSecret, truncateEnd } from "../../domain/Text.js"
import { toolCallFromWire } from "../../domain/ToolCall.js"
import { withSpanWhenTraced } from "../../programs/Spans.js"
import { badResponse, hideInError, hideInResponse, statusError, transportError } from "./HttpFailure.js"
import { ChatCompletion, chatCompletionBody, errorBodyMessage, WireErrorBody } from "./OpenAiWire.js"
import type { Provider, ProviderResponse } from "./Provider.js"

const decodeCompletion = onFirstCall(() => Schema.decodeUnknownEither(ChatCompletion, { errors: "all" }))
const decodeErrorBody = onFirstCall(() => Schema.decodeUnknownOption(WireErrorBody))

const parseJson = (text: string): Option.Option<unknown> => {
  try {
    return Option.some(JSON.parse(text))
  } catch {
    return Option.none()
  }
}

/** The typed error body's message, else the raw body (truncated): what the provider said, never a guess. */
const providerMessage = (text: string): string =>
  Option.flatMap(parseJson(text), decodeErrorBody).pipe(
    Option.map(errorBodyMessage),
    Option.getOrElse(() => text.trim() === "" ? "(empty body)" : truncateEnd(text.trim(), 500))
  )

/** The status line came but the body did not (reset mid-body): a transport failure, as retryable as a refusal. */
const bodyReadError = (provider: string, error: HttpClientError.ResponseError): LlmError =>
  new LlmError({
    reason: "Transport",
    provider,
    status: error.response.status,
    message: `${error.methodAndUrl}: the response body could not be read: ${
      error.cause instanceof Error ? error.cause.message : error.message
    }`
  })

const finishReason = (raw: string | null | undefined, hasToolCalls: boolean): FinishReason => {
  switch (raw) {
    case "stop":
      return "stop"
    case "tool_calls":
    case "function_call":
      return "tool_call"
    case "length":
      return "length"
    case "content_filter":
      return "content_filter"
    default:
      return raw == null && hasToolCalls ? "tool_call" : "other"
  }
}

const missingMessage = (completion: ChatCompletion): string => {
  if (completion.choices == null) return "no choices[0].message: the body has no `choices`"
  if (completion.choices.length === 0) return "no choices[0].message: `choices` is empty"
  return "no choices[0].message: choices[0] has no `message`"
}

/**
 * A provider speaking Chat Completions (OpenAI, llama.cpp server, Ollama, vLLM, OpenRouter...). It makes
 * exactly one HTTP call per generate: retries, timeouts and failover belong to the tier layer.
 */
export const makeOpenAiProvider = (
  config: OpenAiProviderConfig,
  apiKey: Option.Option<Redacted.Redacted<string>>
): Effect.Effect<Provider, never, HttpClient.HttpClient> =>
  Effect.map(HttpClient.HttpClient, (client): Provider => {
    const name = `openai:${config.model}`
    const endpoint = HttpClientRequest.post(`${config.baseUrl}/chat/completions`)
    let generatedIds = 0

    // A server may echo the key back in an error body: no message ever carries it.
    const redact = Option.match(apiKey, {
      onNone: () => (text: string) => text,
      onSome: (key) => hideSecret(Redacted.value(key))
    })

    const toResponse = (completion: ChatCompletion): Either.Either<ProviderResponse, LlmError> => {
      const message = completion.choices?.[0]?.message
      if (message == null) return Either.left(badResponse(name, missingMessage(completion)))
      const content = message.content
      const text = typeof content === "string"
        ? content
        : content == null
        ? message.refusal ?? ""
        : content.map((part) => part.text ?? "").join("")
      const toolCalls = (message.tool_calls ?? []).map((call) => {
        const args = call.function.arguments
        return toolCallFromWire(
          call.id || `call_${++generatedIds}`,
          call.function.name,
          args == null || (typeof args === "string" && args.trim() === "") ? "{}" : args
        )
      })
      const usage = completion.usage
      return Either.right({
        model: completion.model || config.model,
        text,
        toolCalls,
        usage: {
          input: usage?.prompt_tokens ?? 0,
          output: usage?.completion_tokens ?? 0,
          cached: usage?.prompt_tokens_details?.cached_tokens ?? 0
        },
        finishReason: finishReason(completion.choices?.[0]?.finish_reason, toolCalls.length > 0)
      })
    }

    const decodeBody = (text: string): Either.Either<ProviderResponse, LlmError> => {
      const json = parseJson(text)
      if (Option.isNone(json)) return Either.left(badResponse(name, `the body is not JSON: ${truncateEnd(text, 200)}`))
      return decodeCompletion(json.value).pipe(
        Either.mapLeft((error) =>
          badResponse(
            name,
            ParseResult.ArrayFormatter.formatErrorSync(error)
              .map((issue) => `${issue.path.join(".") || "body"}: ${issue.message}`)
              .join("; ")
          )
        ),
        Either.flatMap(toResponse),
        Either.mapLeft((error) =>
          Option.match(decodeErrorBody(json.value), {
            onNone: () => error,
            onSome: (body) => badResponse(name, `${error.message}; the provider said: ${errorBodyMessage(body)}`)
          })
        )
      )
    }

    // Its span only when a tracer exports spans (Effect.fn would make one, stack trace included, for every call).
    const generate = Effect.fnUntraced(
      function*(request: LlmRequest) {
        const httpRequest = yield* Effect.try({
          try: () => HttpClientRequest.bodyUnsafeJson(endpoint, chatCompletionBody(config, request)),
          catch: (error) =>
            new LlmError({ reason: "BadRequest", provider: name, message: `cannot encode the request: ${error}` })
        })
        const response = yield* client.execute(
          Option.match(apiKey, {
            onNone: () => httpRequest,
            onSome: (key) => HttpClientRequest.bearerToken(httpRequest, key)
          })
        ).pipe(Effect.catchTags({
          RequestError: (error) => Effect.fail(transportError(name, error)),
          ResponseError: (error) => Effect.fail(bodyReadError(name, error))
        }))
        const body = yield* Effect.either(Effect.map(response.text, redact))
        if (response.status < 200 || response.status >= 300) {
          const now = yield* Clock.currentTimeMillis
          const said = Either.isRight(body) ? providerMessage(body.right) : "(the body could not be read)"
          return yield* statusError(name, response.status, said, response.headers, now)
        }
        if (Either.isLeft(body)) return yield* bodyReadError(name, body.left)
        return yield* decodeBody(body.right)
      },
      // Decoding may have turned an escaped key back into the key: what comes out is hidden again afterwards.
      Effect.mapBoth({ onFailure: hideInError(redact), onSuccess: hideInResponse(redact) }),
      withSpanWhenTraced("OpenAiProvider.generate", () => ({ attributes: { provider: name } }))
    )

    return { name, model: config.model, generate, maxOutputTokens: config.maxTokens }
  })
