import { Effect } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

/** What the local server received, for assertions on the wire format we sent. */
export interface ReceivedRequest {
  readonly method: string
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
}

/** One canned reply; `destroy` drops the connection without answering. */
export interface Reply {
  readonly status?: number
  readonly headers?: Record<string, string>
  readonly body?: string | object
  readonly destroy?: boolean
}

/**
 * A real HTTP server on 127.0.0.1 (ephemeral port) speaking whatever wire format the replies carry: the
 * replies are served in order, one per request, and every request is recorded. Closed with the scope.
 */
export const localServer = (replies: ReadonlyArray<Reply>) =>
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly requests: Array<ReceivedRequest>; readonly server: Http.Server }>(
      (resume) => {
        const requests: Array<ReceivedRequest> = []
        const server = Http.createServer((req, res) => {
          let body = ""
          req.setEncoding("utf8")
          req.on("data", (chunk: string) => (body += chunk))
          req.on("end", () => {
            requests.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body })
            const reply = replies[requests.length - 1] ??
              { status: 500, body: { error: "the test server ran out of replies" } }
            if (reply.destroy) return req.socket.destroy()
            const text = typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body ?? {})
            res.writeHead(reply.status ?? 200, { "content-type": "application/json", ...reply.headers })
            res.end(text)
          })
        })
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as AddressInfo
          resume(Effect.succeed({ url: `http://127.0.0.1:${port}`, requests, server }))
        })
      }
    ),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

/** A loopback address where nothing listens: connections are refused at once. */
export const refusedUrl = Effect.map(
  Effect.scoped(localServer([])),
  ({ url }) => url
)
