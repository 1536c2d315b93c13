import { Duration, Effect, Schema } from "effect"
import { Api, GrammyError, HttpError } from "grammy"

/** Why a Bot API call failed: the retry decision matches on it. */
export const TelegramFailure = Schema.Literal("Refused", "RateLimited", "Server", "Network")
export type TelegramFailure = typeof TelegramFailure.Type

export class TelegramError extends Schema.TaggedError<TelegramError>()("TelegramError", {
  reason: TelegramFailure,
  method: Schema.String,
  message: Schema.String,
  code: Schema.optional(Schema.Number),
  /** What a 429 asked us to wait, in seconds. */
  retryAfterSeconds: Schema.optional(Schema.Number)
}) {}

const toError = (method: string) => (error: unknown): TelegramError => {
  if (error instanceof GrammyError) {
    const retryAfter = error.parameters.retry_after
    return new TelegramError({
      reason: error.error_code === 429 ? "RateLimited" : error.error_code >= 500 ? "Server" : "Refused",
      method,
      message: error.description,
      code: error.error_code,
      ...(typeof retryAfter === "number" ? { retryAfterSeconds: retryAfter } : {})
    })
  }
  // grammY's HttpError names the method, never the token.
  if (error instanceof HttpError) return new TelegramError({ reason: "Network", method, message: error.message })
  return new TelegramError({ reason: "Network", method, message: error instanceof Error ? error.message : "failed" })
}

/** The AbortSignal type grammY's methods declare (an older shim's); the platform's signal is what they receive. */
export type ApiSignal = NonNullable<Parameters<Api["getMe"]>[0]>

export interface RetryOptions {
  /** Attempts after the first for network and server errors (backoff doubling from 1 s, at most 30 s). */
  readonly retries: number
  /** 429 answers honoured (waiting their retry_after) before giving up. */
  readonly rateLimitRetries: number
}

const defaultRetry: RetryOptions = { retries: 4, rateLimitRetries: 5 }

/**
 * One Bot API call through grammY's client, on the Effect clock: a 429 waits exactly its `retry_after` and tries
 * again, network and server errors are retried with backoff, a refusal (4xx) fails at once. Interrupting the
 * call aborts the request.
 */
export const callApi = <A>(
  method: string,
  run: (signal: ApiSignal) => Promise<A>,
  options: RetryOptions = defaultRetry
): Effect.Effect<A, TelegramError> => {
  const attempt = Effect.tryPromise({ try: (signal) => run(signal as unknown as ApiSignal), catch: toError(method) })
  const loop = (retries: number, rateLimits: number, backoffMs: number): Effect.Effect<A, TelegramError> =>
    Effect.catchIf(
      attempt,
      (error) => error.reason === "RateLimited" ? rateLimits > 0 : error.reason !== "Refused" && retries > 0,
      (error) => {
        const waitMs = error.reason === "RateLimited" ? (error.retryAfterSeconds ?? 1) * 1000 : backoffMs
        return Effect.logWarning(`telegram ${method}: ${error.reason} (${error.message}); retrying in ${waitMs} ms`)
          .pipe(
            Effect.zipRight(Effect.sleep(Duration.millis(waitMs))),
            Effect.zipRight(
              error.reason === "RateLimited"
                ? loop(retries, rateLimits - 1, backoffMs)
                : loop(retries - 1, rateLimits, Math.min(backoffMs * 2, 30_000))
            )
          )
      }
    )
  return loop(options.retries, options.rateLimitRetries, 1000)
}

/** grammY's Bot API client for `token`, talking to `apiRoot` (Telegram's by default). */
export const makeApi = (token: string, apiRoot: string | undefined): Api =>
  new Api(token, apiRoot === undefined ? {} : { apiRoot })

/** What a failing call means for the owner, and what to do (for /health; the token is never in it). */
export const failureForOwner = (error: TelegramError): string => {
  if (error.code === 401 || error.code === 404) {
    return `Telegram refused the bot token (${error.code} ${error.message}): check TELEGRAM_BOT_TOKEN`
  }
  if (error.code === 409) {
    return `another process is receiving this bot's updates (409 ${error.message}): stop it, or give each its own ` +
      "bot token"
  }
  if (error.reason === "Network") return `Telegram cannot be reached (${error.method}: ${error.message})`
  return `${error.method} failed (${error.code ?? error.reason}: ${error.message})`
}
