import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Config, Effect, Option, Redacted } from "effect"
import { hash, timingSafeEqual } from "node:crypto"

/** MYCLAW_ADMIN_TOKEN: the bearer token of the admin endpoints; unset (or empty) turns them off. */
export const AdminToken = Config.option(Config.redacted("MYCLAW_ADMIN_TOKEN")).pipe(
  Config.map(Option.filter((token) => Redacted.value(token) !== ""))
)

export const adminTokenMissing =
  "MYCLAW_ADMIN_TOKEN is not set, so GET /metrics, POST /v1/turns and the approvals API (/v1/approvals) answer 403"

const digest = (text: string): Buffer => hash("sha256", text, "buffer")

/**
 * Constant-time comparison of the request's bearer token with the configured one, through their digests (equal
 * lengths whatever was presented); the configured token's is `expected`, made once.
 */
const matches = (header: string | undefined, expected: Buffer): boolean => {
  const presented = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? "")?.[1]
  return presented !== undefined && timingSafeEqual(digest(presented), expected)
}

/**
 * Runs `handler` only for a request bearing the admin token: 403 when no token is configured (the endpoint
 * is off), 401 when the token is missing or wrong. The token itself never appears in a response or a log.
 */
export const requireAdmin = (token: Option.Option<Redacted.Redacted>) => {
  const expected = Option.map(token, (value) => digest(Redacted.value(value)))
  return <E, R>(
    handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      if (Option.isNone(expected)) {
        return Effect.succeed(
          HttpServerResponse.unsafeJson({ error: "forbidden", message: adminTokenMissing }, { status: 403 })
        )
      }
      if (!matches(request.headers["authorization"], expected.value)) {
        return Effect.succeed(HttpServerResponse.unsafeJson(
          { error: "unauthorized", message: "send Authorization: Bearer <MYCLAW_ADMIN_TOKEN>" },
          { status: 401, headers: { "www-authenticate": "Bearer realm=\"myclaw\"" } }
        ))
      }
      return handler
    })
}
