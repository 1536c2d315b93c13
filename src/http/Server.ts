import type { HttpApp } from "@effect/platform"
import { HttpMiddleware, HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Cause, Config, Effect, Layer, Option, Schema } from "effect"
import type { Redacted } from "effect"
import { createServer } from "node:http"
import { makeApprovalsApi } from "../channels/http/Approvals.js"
import { makeTurns } from "../channels/http/Turns.js"
import { TelegramWebhookRoute } from "../channels/telegram/Webhook.js"
import { messageOf } from "../domain/Errors.js"
import * as Compose from "../layers/Compose.js"
import { ErrorCountingLogger } from "../layers/Logging.js"
import { isExporting } from "../programs/Spans.js"
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
  Effect.map(makeRoutes(adminToken), ({ router }) => router)

/** The router and the drain of its turns in flight (what a shutdown runs before the server closes). */
export const makeRoutes = (adminToken: Option.Option<Redacted.Redacted>) =>
  Effect.gen(function*() {
    const health = yield* makeHealth
    const metrics = yield* Metrics
    const turns = yield* makeTurns
    const approvals = yield* makeApprovalsApi(Option.isSome(adminToken))
    const admin = requireAdmin(adminToken)
    const telegram = Option.flatten(yield* Effect.serviceOption(TelegramWebhookRoute))
    const router = HttpRouter.empty.pipe(
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
      HttpRouter.post("/v1/turns", boundary(admin(turns.handle))),
      HttpRouter.get("/v1/approvals", boundary(admin(approvals.list))),
      HttpRouter.post("/v1/approvals/:id", boundary(admin(approvals.answer))),
      // Telegram's webhook, when the channel runs in webhook mode: checked by its own secret token, not the admin's.
      (routes) =>
        Option.isSome(telegram) ? HttpRouter.post(routes, telegram.value.path, boundary(telegram.value.app)) : routes,
      Effect.catchTag("RouteNotFound", () =>
        Effect.map(HttpServerRequest.HttpServerRequest, notRouted))
    )
    return { router, drain: turns.drain }
  })

/**
 * Serves `app` on the HTTP server in context until the scope closes. The server's span for each request
 * (`http.server <method>`, the parent of the turn's) is made only when a tracer exports spans, as the turn's own
 * are: under the default tracer nobody reads it, and making it (the URL parsed, the headers copied and redacted,
 * an attribute for each) is several dozen runtime operations of every request.
 */
export const serveApp = <E, R>(app: HttpApp.Default<E, R>) =>
  Effect.flatMap(Effect.tracer, (tracer) =>
    isExporting(tracer)
      ? HttpServer.serveEffect(app)
      : HttpMiddleware.withTracerDisabledWhenEffect(HttpServer.serveEffect(app), () => true))

/** The methods of each route, for the 405 of a known path asked with another method. */
const routes: ReadonlyArray<readonly [RegExp, string]> = [
  [/^\/health$/, "GET"],
  [/^\/metrics$/, "GET"],
  [/^\/v1\/turns$/, "POST"],
  [/^\/v1\/approvals$/, "GET"],
  [/^\/v1\/approvals\/[^/]+$/, "POST"]
]

/** A request no route took: 405 with `Allow` when the path is known, else a JSON 404. */
const notRouted = (request: HttpServerRequest.HttpServerRequest) => {
  const path = request.url.split("?")[0]!
  const allow = routes.find(([pattern]) => pattern.test(path))?.[1]
  return allow === undefined
    ? HttpServerResponse.unsafeJson({ error: "not_found", message: `no route ${path}` }, { status: 404 })
    : HttpServerResponse.unsafeJson(
      { error: "method_not_allowed", message: `${path} accepts ${allow} only`, allow },
      { status: 405, headers: { allow } }
    )
}

export const HttpConfig = Config.all({
  host: Config.string("MYCLAW_HTTP_HOST").pipe(Config.withDefault("127.0.0.1")),
  /** 0 asks the system for a free port (the address is logged). */
  port: Config.integer("MYCLAW_HTTP_PORT").pipe(
    Config.validate({ message: "a port number from 0 to 65535", validation: (n) => n >= 0 && n <= 65535 }),
    Config.withDefault(8787)
  ),
  /** On SIGTERM/SIGINT: how long turns in flight may take to finish before they are interrupted. */
  shutdownGraceMs: Config.integer("MYCLAW_SHUTDOWN_GRACE_MS").pipe(
    Config.validate({ message: "milliseconds, 0 or more", validation: (n) => n >= 0 }),
    Config.withDefault(5000)
  )
})

/** The server cannot listen: the address, the system's code and what to change are in the message. */
export class HttpListenError extends Schema.TaggedError<HttpListenError>()("HttpListenError", {
  address: Schema.String,
  code: Schema.String,
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}

export const listenError = (host: string, port: number, cause: unknown): HttpListenError => {
  const code = typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : "unknown"
  const address = `${host}:${port}`
  const change = "set MYCLAW_HTTP_PORT (and MYCLAW_HTTP_HOST) to a free address"
  const why = code === "EADDRINUSE"
    ? `the address is already in use (EADDRINUSE): another process, perhaps another myclaw serve, holds it; stop it or ${change}`
    : code === "EACCES"
    ? `permission denied (EACCES): ports below 1024 need privileges; ${change}`
    : code === "EADDRNOTAVAIL"
    ? `no such address on this machine (EADDRNOTAVAIL); ${change}`
    : `${code}: ${messageOf(cause)}; ${change}`
  return new HttpListenError({ address, code, message: `cannot listen on ${address}: ${why}`, cause })
}

/** The HTTP server on MYCLAW_HTTP_HOST:MYCLAW_HTTP_PORT, closed with its scope; it needs `Metrics`. */
export const HttpServerLive = Layer.unwrapScoped(
  Effect.gen(function*() {
    const { host, port, shutdownGraceMs } = yield* HttpConfig
    const adminToken = yield* AdminToken
    if (Option.isNone(adminToken)) yield* Effect.logWarning(`${adminTokenMissing}: set it to enable them`)
    const { drain, router } = yield* makeRoutes(adminToken)
    const listening = NodeHttpServer.layerServer(createServer, { host, port }).pipe(
      Layer.catchAll((error) => Layer.fail(listenError(host, port, error.cause)))
    )
    // Built after the server, so closed before it: turns in flight are drained (with a deadline) while the server
    // still answers (/health, and 503 to new turns); only then does it stop listening.
    const draining = Layer.scopedDiscard(Effect.addFinalizer(() => drain(shutdownGraceMs)))
    return draining.pipe(
      Compose.provideMerge(Layer.scopedDiscard(serveApp(router)).pipe(HttpServer.withLogAddress)),
      Compose.provide(listening)
    )
  })
)

/** The server as `myclaw serve` runs it: error log lines counted for /health. */
export const HttpLive = HttpServerLive.pipe(Compose.provide(ErrorCountingLogger))
