import { HttpClient, HttpClientRequest, HttpServer } from "@effect/platform"
import type { HttpClientResponse } from "@effect/platform"
import { NodeHttpClient, NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, Option, Redacted } from "effect"
import { execFile } from "node:child_process"
import * as NodeFs from "node:fs"
import { createServer } from "node:http"
import { makeRouter, serveApp } from "../../src/http/Server.js"
import { ErrorCountingLogger } from "../../src/layers/Logging.js"
import { TestLayer, type TestOptions } from "../../src/layers/Test.js"

export const TOKEN = "test-admin-token-4f2a"

/** A real HTTP server on 127.0.0.1 (ephemeral port) and a client whose relative URLs go to it (merge it last). */
export const Loopback = HttpServer.layerTestClient.pipe(
  Layer.provide(NodeHttpClient.layerUndici),
  Layer.provideMerge(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: 0 }))
)

/** The test graph (scripted model, memory audit log, temp workspace) with Metrics, as `serve` would wire it. */
export const ServedGraph = (options: TestOptions) => ErrorCountingLogger.pipe(Layer.provideMerge(TestLayer(options)))

/** Serves the real router on the loopback server for the rest of the scope; `null`: no admin token configured. */
export const serve = (token: string | null = TOKEN) =>
  Effect.flatMap(
    makeRouter(token === null ? Option.none() : Option.some(Redacted.make(token))),
    serveApp
  )

export const get = (path: string, token?: string) =>
  HttpClient.execute(
    token === undefined
      ? HttpClientRequest.get(path)
      : HttpClientRequest.get(path).pipe(HttpClientRequest.bearerToken(token))
  )

export const postJson = (path: string, body: unknown, token?: string) => {
  const request = HttpClientRequest.post(path).pipe(
    HttpClientRequest.bodyText(typeof body === "string" ? body : JSON.stringify(body), "application/json")
  )
  return HttpClient.execute(token === undefined ? request : request.pipe(HttpClientRequest.bearerToken(token)))
}

export const textOf = (response: HttpClientResponse.HttpClientResponse) => response.text

/** `promtool` from the Debian package `prometheus` (.ci/run installs it); undefined where it is not installed. */
export const promtoolPath = ["/usr/bin/promtool", "/usr/local/bin/promtool"].find((path) => NodeFs.existsSync(path))

export interface PromtoolResult {
  readonly code: number
  readonly problems: ReadonlyArray<string>
  readonly stderr: string
}

/** `promtool check metrics` on `text` (stdin): exit 0 clean, 3 lint problems (one per stderr line), 1 parse error. */
export const promtoolCheck = (text: string) =>
  Effect.async<PromtoolResult>((resume) => {
    const child = execFile(promtoolPath!, ["check", "metrics"], (error, _stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
      resume(Effect.succeed({ code, stderr, problems: stderr.split("\n").filter((line) => line.trim() !== "") }))
    })
    child.stdin!.end(text)
  })

/** The samples of an exposition text: `name{labels}` (as rendered) to value. */
export const samplesOf = (text: string): Map<string, number> =>
  new Map(
    text.split("\n").filter((line) => line !== "" && !line.startsWith("#")).map((line) => {
      const cut = line.lastIndexOf(" ")
      const value = line.slice(cut + 1)
      return [line.slice(0, cut), value === "+Inf" ? Infinity : value === "-Inf" ? -Infinity : Number(value)] as const
    })
  )
