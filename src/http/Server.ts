import { HttpRouter, HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Config, Effect, Layer } from "effect"
import { createServer } from "node:http"
import { makeHealth } from "./Health.js"

/** The routes: `/health` now; `/metrics` and `POST /v1/turns` come with observability. */
export const makeRouter = Effect.gen(function*() {
  const health = yield* makeHealth
  return HttpRouter.empty.pipe(
    HttpRouter.get(
      "/health",
      Effect.flatMap(health, (report) => HttpServerResponse.json(report, { status: report.status === "down" ? 503 : 200 }))
    )
  )
})

export const HttpConfig = Config.all({
  host: Config.string("MYCLAW_HTTP_HOST").pipe(Config.withDefault("127.0.0.1")),
  /** 0 asks the system for a free port (the address is logged). */
  port: Config.integer("MYCLAW_HTTP_PORT").pipe(
    Config.validate({ message: "a port number from 0 to 65535", validation: (n) => n >= 0 && n <= 65535 }),
    Config.withDefault(8787)
  )
})

/** The HTTP server on MYCLAW_HTTP_HOST:MYCLAW_HTTP_PORT, closed with its scope. */
export const HttpLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const { host, port } = yield* HttpConfig
    const router = yield* makeRouter
    return HttpServer.serve(router).pipe(
      HttpServer.withLogAddress,
      Layer.provide(NodeHttpServer.layer(createServer, { host, port }))
    )
  })
)
