import { HttpClient } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeHttp from "node:http"
import type { AddressInfo } from "node:net"
import { HttpClientOnDemand } from "../../src/layers/Base.js"
import { recordingTracer } from "../support/Tracing.js"

interface Recording {
  readonly url: string
  readonly headers: Array<NodeHttp.IncomingHttpHeaders>
  readonly server: NodeHttp.Server
}

/** A server on 127.0.0.1 that answers 204 and keeps each request's headers; closed with the scope. */
const recordingServer = Effect.acquireRelease(
  Effect.async<Recording>((resume) => {
    const headers: Array<NodeHttp.IncomingHttpHeaders> = []
    const server = NodeHttp.createServer((request, response) => {
      headers.push(request.headers)
      request.resume()
      request.on("end", () => response.writeHead(204).end())
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resume(Effect.succeed({ url: `http://127.0.0.1:${port}/`, headers, server }))
    })
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
)

const getWith = (url: string) =>
  Effect.flatMap(HttpClient.HttpClient, (client) => Effect.scoped(client.get(url))).pipe(
    Effect.provide(HttpClientOnDemand)
  )

describe("HttpClientOnDemand", () => {
  it.scoped("under the default tracer (nothing exports spans) a request carries no trace headers", () =>
    Effect.gen(function*() {
      const { headers, url } = yield* recordingServer
      const response = yield* getWith(url)
      assert.strictEqual(response.status, 204)
      assert.isUndefined(headers[0]?.traceparent)
    }))

  it.scoped("under a tracer that exports, each request is a span whose context travels in `traceparent`", () =>
    Effect.gen(function*() {
      const { headers, url } = yield* recordingServer
      const { spans, tracer } = yield* recordingTracer
      yield* getWith(url).pipe(Effect.withTracer(tracer))
      assert.deepStrictEqual(spans.map((span) => span.name), ["http.client GET"])
      assert.match(String(headers[0]?.traceparent), /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/)
    }))
})
