import { HttpRouter, HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Cause, Config, Effect, Layer, Option } from "effect"
import type { Redacted } from "effect"
import { createServer } from "node:http"
import { makeApprovalsApi } from "../channels/http/Approvals.js"
import { makeTurns } from "../channels/http/Turns.js"
import { TelegramWebhookRoute } from "../channels/telegram/Webhook.js"
import { ErrorCountingLogger } from "../layers/Logging.js"
import { Metrics } from "../services/Metrics.js"
import { AdminToken, adminTokenMissing, requireAdmin } from "./AdminAuth.js"
import { makeHealth } from "./Health.js"
import { prometheusContentType, renderPrometheus } from "./Prometheus.js"

/** The outermost boundary of a route: an unexpected failure is logged and answered with 500, never swallowed. */
const boundary = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.catchAllCause(handler, (cause) =>
    Cause.isInterruptedOnly(cause)
      ? Effect.failCause(cause)
      : Effect.as(
        Effect.logError("HTTP request failed", cause),
        HttpServerResponse.unsafeJson({ error: "internal", message: "internal error (logged)" }, { status: 500 })
      ))

/**
 * The routes: `GET /health` (open), `GET /metrics`, `POST /v1/turns`, `GET /v1/approvals` and
 * `POST /v1/approvals/{id}` (admin token). `adminToken` none turns the admin routes off (403). Built once, in
 * the server's scope (the approvals API answers approvals while it is open); each request only runs handlers.
 */
export const makeRouter = (adminToken: Option.Option<Redacted.Redacted>) =>
  Effect.gen(function*() {
    const health = yield* makeHealth
    const metrics = yield* Metrics
    const turns = yield* makeTurns
    const approvals = yield* makeApprovalsApi(Option.isSome(adminToken))
    const admin = requireAdmin(adminToken)
    const telegram = Option.flatten(yield* Effect.serviceOption(TelegramWebhookRoute))
    const routes = HttpRouter.empty.pipe(
      HttpRouter.get(
        "/health",
        boundary(Effect.map(health, (report) =>
          HttpServerResponse.unsafeJson(report, {
            status: report.status === "down" ? 503 : 200,
            headers: { "cache-control": "no-store" }
          })))
      ),
      HttpRouter.get(
        "/metrics",
        boundary(admin(Effect.map(metrics.scrape, (pairs) =>
          HttpServerResponse.text(renderPrometheus(pairs), { contentType: prometheusContentType }))))
      ),
      HttpRouter.post("/v1/turns", boundary(admin(turns))),
      HttpRouter.get("/v1/approvals", boundary(admin(approvals.list))),
      HttpRouter.post("/v1/approvals/:id", boundary(admin(approvals.answer)))
    )
    // Telegram's webhook, when the channel runs in webhook mode: checked by its own secret token, not the admin's.
    return Option.isSome(telegram) ? HttpRouter.post(routes, telegram.value.path, boundary(telegram.value.app)) : routes
  })

export const HttpConfig = Config.all({
  host: Config.string("MYCLAW_HTTP_HOST").pipe(Config.withDefault("127.0.0.1")),
  /** 0 asks the system for a free port (the address is logged). */
  port: Config.integer("MYCLAW_HTTP_PORT").pipe(
    Config.validate({ message: "a port number from 0 to 65535", validation: (n) => n >= 0 && n <= 65535 }),
    Config.withDefault(8787)
  )
})

/** The HTTP server on MYCLAW_HTTP_HOST:MYCLAW_HTTP_PORT, closed with its scope; it needs `Metrics`. */
export const HttpServerLive = Layer.unwrapScoped(
  Effect.gen(function*() {
    const { host, port } = yield* HttpConfig
    const adminToken = yield* AdminToken
    if (Option.isNone(adminToken)) yield* Effect.logWarning(`${adminTokenMissing}: set it to enable them`)
    const router = yield* makeRouter(adminToken)
    return HttpServer.serve(router).pipe(
      HttpServer.withLogAddress,
      Layer.provide(NodeHttpServer.layer(createServer, { host, port }))
    )
  })
)

/** The server as `myclaw serve` runs it: error log lines counted for /health. */
export const HttpLive = HttpServerLive.pipe(Layer.provide(ErrorCountingLogger))
