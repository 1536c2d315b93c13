import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Zlib from "node:zlib"
import type { ToolOutput } from "../../../src/domain/Tool.js"
import { TestLayer } from "../../../src/layers/Test.js"
import { makeWebFetchTool, type Resolver, type WebFetchOptions } from "../../../src/layers/tools/WebFetchTool.js"
import { AgentRuntime } from "../../../src/services/AgentRuntime.js"
import { recordingLlm } from "../../contract/fixtures.js"

/** A real server on `host` answering every request with `handler`; it counts the connections it accepted. */
const server = (host: string, handler: (req: Http.IncomingMessage, res: Http.ServerResponse, port: number) => void) =>
  Effect.acquireRelease(
    Effect.async<{ readonly port: number; readonly connections: () => number; readonly server: Http.Server }>(
      (resume) => {
        let connections = 0
        const created = Http.createServer((req, res) => handler(req, res, (created.address() as AddressInfo).port))
        created.on("connection", () => connections++)
        created.listen(0, host, () =>
          resume(Effect.succeed({
            port: (created.address() as AddressInfo).port,
            connections: () => connections,
            server: created
          })))
      }
    ),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

const page = (contentType: string, body: string | Buffer) => (_: Http.IncomingMessage, res: Http.ServerResponse) => {
  res.writeHead(200, { "content-type": contentType })
  res.end(body)
}

/** A resolver that must not be asked: an IP literal is judged without any lookup. */
const noLookup: Resolver = (hostname) => Promise.reject(new Error(`unexpected lookup of ${hostname}`))

const fetchWith = (options: Partial<WebFetchOptions>, args: unknown) => {
  const tool = makeWebFetchTool({ allowPrivate: [], timeoutMs: 10_000, maxBytes: 1024 * 1024, ...options })
  const prepared = tool.prepare(args)
  if (Either.isLeft(prepared)) return Effect.die(prepared.left)
  return Effect.either(prepared.right.execute)
}

const refusal = (result: Either.Either<ToolOutput, { readonly message: string }>): string =>
  Either.isLeft(result) ? result.left.message : `not refused: ${result.right.status} ${result.right.content}`

describe("web_fetch address guard", () => {
  it.scoped("refuses loopback, private, link-local and disguised addresses without connecting", () =>
    Effect.gen(function*() {
      const local = yield* server("127.0.0.1", page("text/plain", "secret"))
      const urls = [
        `http://127.0.0.1:${local.port}/`,
        `http://[::1]:${local.port}/`,
        `http://10.0.0.1:${local.port}/`,
        "http://169.254.169.254/latest/meta-data/",
        `http://2130706433:${local.port}/`,
        `http://0x7f.1:${local.port}/`,
        `http://017700000001:${local.port}/`,
        `http://[::ffff:127.0.0.1]:${local.port}/`,
        `http://0.0.0.0:${local.port}/`,
        `http://[fd00::1]:${local.port}/`
      ]
      for (const url of urls) {
        assert.match(refusal(yield* fetchWith({ resolve: noLookup }, { url })), /^refused: /, url)
      }
      assert.strictEqual(local.connections(), 0)
    }))

  it.scoped("judges the resolved address: a name resolving to loopback is refused, every address counts", () =>
    Effect.gen(function*() {
      const local = yield* server("127.0.0.1", page("text/plain", "secret"))
      const asked: Array<string> = []
      const resolve: Resolver = (hostname) => {
        asked.push(hostname)
        return Promise.resolve(
          hostname === "evil.test"
            ? [{ address: "127.0.0.1", family: 4 }]
            : [{ address: "93.184.215.14", family: 4 }, { address: "10.1.2.3", family: 4 }]
        )
      }
      const evil = yield* fetchWith({ resolve }, { url: `http://evil.test:${local.port}/` })
      assert.strictEqual(refusal(evil), "refused: evil.test resolves to 127.0.0.1 is a loopback address")
      const mixed = yield* fetchWith({ resolve }, { url: `http://mixed.test:${local.port}/` })
      assert.match(refusal(mixed), /^refused: mixed\.test resolves to 10\.1\.2\.3 is a private address/)
      assert.deepStrictEqual(asked, ["evil.test", "mixed.test"])
      assert.strictEqual(local.connections(), 0)
    }))

  it.scoped("a redirect to a forbidden address is refused before any connection to it", () =>
    Effect.gen(function*() {
      const forbidden = yield* server("127.0.0.2", page("text/plain", "internal"))
      const targets = [`http://127.0.0.2:${forbidden.port}/admin`, `http://inner.test:${forbidden.port}/admin`]
      const allowed = yield* server("127.0.0.1", (req, res) => {
        res.writeHead(302, { location: targets[Number(req.url?.slice(1))]! })
        res.end()
      })
      const resolve: Resolver = () => Promise.resolve([{ address: "127.0.0.2", family: 4 }])
      const options = { allowPrivate: ["127.0.0.1"], resolve }
      const direct = yield* fetchWith(options, { url: `http://127.0.0.1:${allowed.port}/0` })
      assert.strictEqual(
        refusal(direct),
        `refused redirect to ${targets[0]}: 127.0.0.2 is a loopback address`
      )
      const named = yield* fetchWith(options, { url: `http://127.0.0.1:${allowed.port}/1` })
      assert.strictEqual(refusal(named), "refused: inner.test resolves to 127.0.0.2 is a loopback address")
      assert.strictEqual(allowed.connections(), 2)
      assert.strictEqual(forbidden.connections(), 0)
    }))

  it.scoped("follows at most five redirects", () =>
    Effect.gen(function*() {
      const loop = yield* server("127.0.0.1", (req, res, port) => {
        const n = Number(req.url?.slice(1))
        if (n < 6) res.writeHead(301, { location: `http://127.0.0.1:${port}/${n + 1}` }).end()
        else page("text/plain", "arrived")(req, res)
      })
      const options = { allowPrivate: ["127.0.0.1"], resolve: noLookup }
      const five = yield* fetchWith(options, { url: `http://127.0.0.1:${loop.port}/1` })
      assert.deepStrictEqual(
        Either.map(five, (out) => [out.status, out.source]),
        Either.right(["success", `url:http://127.0.0.1:${loop.port}/6`])
      )
      const six = yield* fetchWith(options, { url: `http://127.0.0.1:${loop.port}/0` })
      assert.match(refusal(six), /^more than 5 redirects/)
    }))

  it.effect("only http and https URLs pass validation", () =>
    Effect.sync(() => {
      const tool = makeWebFetchTool({ allowPrivate: [], timeoutMs: 1000, maxBytes: 1000 })
      for (const url of ["file:///etc/passwd", "ftp://example.org/", "not a url"]) {
        assert.isTrue(Either.isLeft(tool.prepare({ url })), url)
      }
      assert.strictEqual(
        Either.getOrThrow(tool.prepare({ url: "https://EN.Wikipedia.org./wiki/X" })).target,
        "en.wikipedia.org"
      )
    }))
})

describe("web_fetch content", () => {
  const allowLocal = { allowPrivate: ["127.0.0.1"], resolve: noLookup }

  it.scoped("cuts an oversized body at max_bytes, with a note", () =>
    Effect.gen(function*() {
      const big = yield* server("127.0.0.1", page("text/plain; charset=utf-8", "é".repeat(50_000)))
      const result = yield* fetchWith(allowLocal, { url: `http://127.0.0.1:${big.port}/`, max_bytes: 1001 })
      const out = Either.getOrThrow(result)
      assert.strictEqual(out.status, "partial")
      assert.strictEqual(out.note, "cut at 1001 bytes")
      assert.include(out.content, "[cut at 1001 bytes: the rest was not read]")
      assert.include(out.content, "é".repeat(500))
      assert.notInclude(out.content, "é".repeat(501))
      assert.notInclude(out.content, "\uFFFD")
    }))

  it.scoped("a body sent compressed though it was not asked to be is decompressed, and cut at max_bytes decompressed", () =>
    Effect.gen(function*() {
      const text = "Città di Roma — compressed page. ".repeat(40)
      const encodings: Record<string, (body: Buffer) => Buffer> = {
        "/gzip": Zlib.gzipSync,
        "/x-gzip": Zlib.gzipSync,
        "/deflate": Zlib.deflateSync,
        "/raw-deflate": Zlib.deflateRawSync,
        "/br": Zlib.brotliCompressSync
      }
      const names: Record<string, string> = { "/x-gzip": "x-gzip", "/raw-deflate": "deflate" }
      const site = yield* server("127.0.0.1", (req, res) => {
        const path = req.url ?? ""
        if (path === "/bomb") {
          res.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" })
          return res.end(Zlib.gzipSync(Buffer.alloc(20_000_000, "a")))
        }
        if (path === "/zstd") {
          res.writeHead(200, { "content-type": "text/plain", "content-encoding": "zstd" })
          return res.end(Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0, 0]))
        }
        if (path === "/corrupt") {
          res.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" })
          return res.end(Buffer.from("not gzip at all"))
        }
        const encoding = names[path] ?? path.slice(1)
        res.writeHead(200, { "content-type": "text/plain; charset=utf-8", "content-encoding": encoding })
        res.end(encodings[path]!(Buffer.from(text)))
      })
      const base = `http://127.0.0.1:${site.port}`
      for (const path of Object.keys(encodings)) {
        const out = Either.getOrThrow(yield* fetchWith(allowLocal, { url: `${base}${path}` }))
        assert.strictEqual(out.status, "success", path)
        assert.include(out.content, text.trim(), path)
      }
      const bomb = Either.getOrThrow(yield* fetchWith(allowLocal, { url: `${base}/bomb`, max_bytes: 1001 }))
      assert.strictEqual(bomb.status, "partial")
      assert.include(bomb.content, `${"a".repeat(1001)}\n[cut at 1001 bytes`)
      assert.match(refusal(yield* fetchWith(allowLocal, { url: `${base}/zstd` })), /is sent encoded as zstd: not read/)
      assert.match(
        refusal(yield* fetchWith(allowLocal, { url: `${base}/corrupt` })),
        /could not be decompressed \(gzip\)/
      )
    }))

  it.scoped("a page's encoding is read from its BOM, its header, else its <meta> (as browsers do); UTF-8 by default", () =>
    Effect.gen(function*() {
      const latin = (text: string) => Buffer.from(text, "latin1")
      const routes: Record<string, [string, Buffer]> = {
        // An older Italian page: the encoding only in the page itself, in either spelling of the <meta>.
        "/meta": [
          "text/html",
          latin(
            "<html><head><meta charset=\"iso-8859-1\"><title>Caff\u00e8</title></head><body>Perch\u00e9 s\u00ec</body>"
          )
        ],
        "/http-equiv": [
          "text/html",
          latin(
            "<html><head><META HTTP-EQUIV=\"Content-Type\" CONTENT=\"text/html; charset=windows-1252\">" +
              "</head><body>Citt\u00e0 \u0080 5, \u0093don\u0092t\u0094 \u0085</body>"
          )
        ],
        // The header wins over the <meta>, and a BOM over both.
        "/header": [
          "text/html; charset=utf-8",
          Buffer.from("<html><head><meta charset=\"iso-8859-1\"></head><body><p>Citt\u00e0</p></body>")
        ],
        "/bom": [
          "text/plain; charset=iso-8859-1",
          Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("Citt\u00e0")])
        ],
        "/plain": ["text/plain", Buffer.from("Citt\u00e0 \u{1f600}")]
      }
      const site = yield* server("127.0.0.1", (req, res) => {
        const [type, body] = routes[req.url ?? ""]!
        res.writeHead(200, { "content-type": type }).end(body)
      })
      const text = (path: string) =>
        Effect.map(
          fetchWith(allowLocal, { url: `http://127.0.0.1:${site.port}${path}` }),
          (result) => Either.getOrThrow(result).content
        )
      assert.include(yield* text("/meta"), "# Caff\u00e8")
      assert.include(yield* text("/meta"), "Perch\u00e9 s\u00ec")
      // Windows-1252 as the Encoding standard maps it (Node's own decoder gives C1 controls for 0x80-0x9F).
      assert.include(yield* text("/http-equiv"), "Citt\u00e0 \u20ac 5, \u201cdon\u2019t\u201d \u2026")
      assert.include(yield* text("/header"), "Citt\u00e0")
      assert.include(yield* text("/bom"), "Citt\u00e0")
      assert.include(yield* text("/plain"), "Citt\u00e0 \u{1f600}")
      for (const path of Object.keys(routes)) assert.notMatch(yield* text(path), /[\ufffd\u0080-\u009f]/, path)
    }))

  it.scoped("a page that leaves out <html>, <head> and <body> (HTML allows it; minifiers do it) is read whole", () =>
    Effect.gen(function*() {
      const routes: Record<string, string> = {
        "/bare": "<!doctype html><meta charset=utf-8><title>Tide tables</title><p>High tide at 06:42.<p>Low at 12:51.",
        "/no-body":
          "<html><head><title>Tide tables</title></head><p>High tide at 06:42.</p><p>Low at 12:51.</p></html>",
        "/header-tag": "<!doctype html><title>Tide tables</title><header>Harbour</header><p>High tide at 06:42."
      }
      const site = yield* server("127.0.0.1", (req, res) => {
        res.writeHead(200, { "content-type": "text/html" }).end(routes[req.url ?? ""]!)
      })
      for (const path of Object.keys(routes)) {
        const out = Either.getOrThrow(yield* fetchWith(allowLocal, { url: `http://127.0.0.1:${site.port}${path}` }))
        assert.strictEqual(out.status, "success", `${path}: ${out.content}`)
        assert.include(out.content, "# Tide tables", path)
        assert.include(out.content, "High tide at 06:42.", path)
        assert.strictEqual(out.content.split("Tide tables").length, 2, `${path}: the title once: ${out.content}`)
      }
      const bare = Either.getOrThrow(yield* fetchWith(allowLocal, { url: `http://127.0.0.1:${site.port}/bare` }))
      assert.include(bare.content, "Low at 12:51.")
      const header = Either.getOrThrow(
        yield* fetchWith(allowLocal, { url: `http://127.0.0.1:${site.port}/header-tag` })
      )
      assert.include(header.content, "Harbour")
    }))

  it.scoped("minified HTML keeps its words apart: lines, paragraphs, list items and table cells", () =>
    Effect.gen(function*() {
      const paragraph = "The harbour is calm in the morning and the ferries run on time. ".repeat(10)
      const routes: Record<string, string> = {
        // No whitespace between tags, as a minifier leaves a page.
        "/short": "<!doctype html><html><head><title>Cities</title></head><body><h1>Cities</h1><p>Line one<br>Line " +
          "two</p><ul><li>Rome</li><li>Oslo</li></ul><table><tr><th>Port</th><th>Tide</th></tr><tr><td>Bari</td>" +
          "<td>06:42</td></tr></table><div>Block</div><div>Next</div></body></html>",
        // Long enough for Readability to take it as an article.
        "/article": `<!doctype html><html><head><title>Tides</title></head><body><nav><a href="/">Home</a></nav>` +
          `<article><h1>Tides today</h1><p>${paragraph}</p><p>Second paragraph.</p><ul><li>Rome</li><li>Oslo</li>` +
          `</ul></article></body></html>`
      }
      const site = yield* server("127.0.0.1", (req, res) => {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(routes[req.url ?? ""]!)
      })
      const text = (path: string) =>
        Effect.map(
          fetchWith(allowLocal, { url: `http://127.0.0.1:${site.port}${path}` }),
          (result) => Either.getOrThrow(result).content
        )
      const short = yield* text("/short")
      assert.include(short, "Line one\nLine two\n\nRome\nOslo\n\nPort Tide\nBari 06:42\n\nBlock\n\nNext", short)
      const article = yield* text("/article")
      for (const kept of ["Tides today\n", `${paragraph.trim()}\n`, "\nSecond paragraph.\n", "Rome\nOslo"]) {
        assert.include(article, kept, article)
      }
    }))

  it.scoped("the configured size limit caps max_bytes", () =>
    Effect.gen(function*() {
      const big = yield* server("127.0.0.1", page("application/json", JSON.stringify({ data: "x".repeat(5000) })))
      const out = Either.getOrThrow(
        yield* fetchWith({ ...allowLocal, maxBytes: 100 }, { url: `http://127.0.0.1:${big.port}/`, max_bytes: 9999 })
      )
      assert.deepStrictEqual([out.status, out.note], ["partial", "cut at 100 bytes"])
    }))

  it.scoped("refuses content that is not text; an empty body is `empty`; an HTTP error fails", () =>
    Effect.gen(function*() {
      const routes: Record<string, [number, string, string]> = {
        "/png": [200, "image/png", "\x89PNG"],
        "/empty": [200, "text/plain", ""],
        "/missing": [404, "text/plain", "no"]
      }
      const site = yield* server("127.0.0.1", (req, res) => {
        const [status, type, body] = routes[req.url ?? ""]!
        res.writeHead(status, { "content-type": type }).end(body)
      })
      const base = `http://127.0.0.1:${site.port}`
      assert.match(refusal(yield* fetchWith(allowLocal, { url: `${base}/png` })), /is image\/png, not text/)
      const empty = Either.getOrThrow(yield* fetchWith(allowLocal, { url: `${base}/empty` }))
      assert.strictEqual(empty.status, "empty")
      assert.match(refusal(yield* fetchWith(allowLocal, { url: `${base}/missing` })), /^HTTP 404 Not Found/)
    }))

  it.scoped("HTML becomes readable text, and reaches the model wrapped as untrusted with its URL", () => {
    const html = `<!doctype html><html><head><title>Tide tables</title><style>p{color:red}</style></head><body>
      <nav><a href="/">Home</a></nav><article><h1>Tide tables</h1>
      <p>High tide at <b>06:42</b> and 19:03. Low tide falls at 12:51.</p>
      <p>${"The harbour is calm in the morning and the ferries run on time. ".repeat(12)}</p></article>
      <script>alert("x")</script></body></html>`
    return Effect.gen(function*() {
      const site = yield* server("127.0.0.1", page("text/html; charset=utf-8", html))
      const url = `http://127.0.0.1:${site.port}/tides`
      const llm = recordingLlm([{ toolCalls: [{ name: "web_fetch", args: { url } }] }, { text: "06:42" }])
      const trace = yield* Effect.flatMap(
        AgentRuntime,
        (agent) => agent.handle({ userMessage: `when is high tide? see ${url}`, sessionId: "s", channel: "cli:me" })
      ).pipe(
        Effect.provide(TestLayer({
          llm: llm.layer,
          config: { tools: { web: true }, web: { allowPrivate: ["127.0.0.1"] } }
        }))
      )
      assert.strictEqual(trace.final_response, "06:42")
      const sent = llm.requests[1]!.messages.find((message) => message.role === "tool")
      const content = sent?.role === "tool" ? sent.content : ""
      assert.match(content, new RegExp(`^<untrusted id="[^"]+" source="url:${url}" retrieved_at="[^"]+">\\n`))
      assert.include(content, "High tide at 06:42 and 19:03.")
      assert.include(content, "# Tide tables")
      assert.notInclude(content, "<p>")
      assert.notInclude(content, "alert")
      assert.notInclude(content, "color:red")
    })
  })
})
