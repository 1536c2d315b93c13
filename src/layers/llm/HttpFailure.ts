import type { HttpClientError } from "@effect/platform"
import { LlmError, type LlmFailure } from "../../domain/Errors.js"
import type { ProviderResponse } from "./Provider.js"

/** `retry-after-ms` (OpenAI), else `retry-after` in seconds or as an HTTP date; undefined when absent or absurd. */
export const retryAfterMs = (
  headers: Readonly<Record<string, string | undefined>>,
  now: number
): number | undefined => {
  const ms = Number(headers["retry-after-ms"])
  if (headers["retry-after-ms"] !== undefined && Number.isFinite(ms) && ms >= 0) return ms
  const value = headers["retry-after"]
  if (value === undefined || value.trim() === "") return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

const contextTooLong =
  /context[_ ]length|too many tokens|prompt is too long|maximum context|context window|context size|exceed_context/i

/** The failure class of an HTTP error status; the provider's own message decides ContextTooLong among 400s. */
export const reasonForStatus = (status: number, providerMessage: string): LlmFailure => {
  if (status === 401 || status === 403) return "Auth"
  if (status === 408) return "Timeout"
  if (status === 413 || ((status === 400 || status === 422) && contextTooLong.test(providerMessage))) {
    return "ContextTooLong"
  }
  if (status === 429) return "RateLimited"
  if (status >= 500) return "Server"
  return "BadRequest"
}

/** An HTTP error response as a typed LlmError carrying the provider's message and the status. */
export const statusError = (
  provider: string,
  status: number,
  providerMessage: string,
  headers: Readonly<Record<string, string | undefined>>,
  now: number
): LlmError => {
  const after = retryAfterMs(headers, now)
  return new LlmError({
    reason: reasonForStatus(status, providerMessage),
    provider,
    status,
    message: `HTTP ${status}: ${providerMessage}`,
    ...(after === undefined ? {} : { retryAfterMs: after })
  })
}

/** A request that got no HTTP answer (refused, reset, DNS) is a Transport failure. */
export const transportError = (provider: string, error: HttpClientError.RequestError): LlmError =>
  new LlmError({
    reason: error.reason === "Transport" ? "Transport" : "BadRequest",
    provider,
    message: `${error.methodAndUrl}: ${error.cause instanceof Error ? error.cause.message : error.message}`
  })

/** A 2xx response whose body is not what the wire format promises. */
export const badResponse = (provider: string, detail: string): LlmError =>
  new LlmError({ reason: "BadResponse", provider, message: `unexpected response: ${detail}` })

/** The error with `hide` applied to every message in it, after decoding (what a trace, a log or a screen shows). */
export const hideInError = (hide: (text: string) => string) => (error: LlmError): LlmError =>
  new LlmError({
    reason: error.reason,
    provider: error.provider,
    message: hide(error.message),
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    ...(error.attempts === undefined
      ? {}
      : { attempts: error.attempts.map((attempt) => ({ ...attempt, message: hide(attempt.message) })) })
  })

/** The response with `hide` applied to its text and to the arguments of its tool calls. */
export const hideInResponse = (hide: (text: string) => string) => (response: ProviderResponse): ProviderResponse => {
  const text = hide(response.text)
  let changed = text !== response.text
  const toolCalls = response.toolCalls.map((call) => {
    const json = JSON.stringify(call.args) ?? "null"
    const hidden = hide(json)
    const raw = call.raw_arguments === undefined ? undefined : hide(call.raw_arguments)
    if (hidden === json && raw === call.raw_arguments) return call
    changed = true
    return { ...call, args: JSON.parse(hidden) as unknown, ...(raw === undefined ? {} : { raw_arguments: raw }) }
  })
  return changed ? { ...response, text, toolCalls } : response
}
