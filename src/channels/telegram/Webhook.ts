import { HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Context, Effect, Option, Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import type { TelegramChannel } from "./Channel.js"

/** The route myclaw's HTTP server adds for Telegram's webhook, when the channel runs in webhook mode. */
export interface WebhookRoute {
  readonly path: `/${string}`
  readonly app: Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>
}

export class TelegramWebhookRoute extends Context.Tag("myclaw/TelegramWebhookRoute")<
  TelegramWebhookRoute,
  Option.Option<WebhookRoute>
>() {}

const digest = (text: string) => createHash("sha256").update(text).digest()

/** Telegram's rule for a webhook secret token. */
export const isValidSecretToken = (token: string): boolean => /^[A-Za-z0-9_-]{1,256}$/.test(token)

const MAX_BODY_BYTES = 1_048_576
/** Update ids remembered to drop Telegram's redeliveries. */
const REMEMBERED = 1000

/**
 * POST <path>: one update from Telegram. The secret token header must match (else 401 and nothing happens); the
 * update is handled without waiting for its turn and answered 200 at once; a redelivered update id is dropped.
 */
export const makeWebhookRoute = (channel: TelegramChannel, path: `/${string}`, secret: Redacted.Redacted<string>) => {
  const seen: Array<number> = []
  const app = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const presented = request.headers["x-telegram-bot-api-secret-token"]
    if (presented === undefined || !timingSafeEqual(digest(presented), digest(Redacted.value(secret)))) {
      yield* Effect.logWarning("telegram webhook: refused a request without the right secret token")
      return HttpServerResponse.unsafeJson({ error: "unauthorized" }, { status: 401 })
    }
    const body = yield* request.json.pipe(
      HttpIncomingMessage.withMaxBodySize(Option.some(MAX_BODY_BYTES)),
      Effect.either
    )
    if (body._tag === "Left") {
      yield* Effect.logWarning("telegram webhook: ignored a body that is not JSON")
      return HttpServerResponse.unsafeJson({ error: "bad_request" }, { status: 400 })
    }
    const raw = body.right
    const id = typeof raw === "object" && raw !== null ? (raw as { update_id?: unknown }).update_id : undefined
    if (typeof id === "number") {
      if (seen.includes(id)) {
        yield* Effect.logInfo(`telegram webhook: dropped update ${id}, delivered again`)
        return HttpServerResponse.unsafeJson({})
      }
      seen.push(id)
      if (seen.length > REMEMBERED) seen.shift()
    }
    yield* channel.handle(raw)
    return HttpServerResponse.unsafeJson({})
  })
  return { path, app } satisfies WebhookRoute
}
