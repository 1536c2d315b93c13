import { Duration, Effect, Schema } from "effect"
import * as NodeHttp from "node:http"
import type { LookupFunction } from "node:net"
import type * as NodeZlib from "node:zlib"
import { forbiddenAddress, isIpLiteral, obscuredIpv4 } from "../../domain/AddressClass.js"
import { ToolExecutionError } from "../../domain/Errors.js"
import { canonicalHost } from "../../domain/Hosts.js"
import { byteOrderMark } from "../../domain/Text.js"
import { defineTool, type ToolOutput } from "../../domain/Tool.js"
import { htmlToText } from "./HtmlText.js"

export interface ResolvedAddress {
  readonly address: string
  readonly family: number
}

/** Name resolution, a parameter so that a test can make a name resolve anywhere. */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>

// Node's resolver and TLS client load on the first fetch, not with the tool: a command that never fetches (and
// serve until it does) starts without them.
export const systemResolver: Resolver = (hostname) =>
  import("node:dns").then((dns) => dns.promises.lookup(hostname, { all: true, verbatim: true }))

export interface WebFetchOptions {
  /** Addresses or CIDR ranges that may be reached although they are not public. */
  readonly allowPrivate: ReadonlyArray<string>
  readonly timeoutMs: number
  /** The most bytes of a body read; `max_bytes` may ask for fewer. */
  readonly maxBytes: number
  readonly resolve?: Resolver
}

const MAX_REDIRECTS = 5
const TOOL = "web_fetch"

const HttpUrlString = Schema.String.pipe(Schema.filter((text) => {
  try {
    const url = new URL(text)
    return url.protocol === "http:" || url.protocol === "https:" || `only http and https URLs, not ${url.protocol}`
  } catch {
    return `not a URL: ${JSON.stringify(text)}`
  }
}))

const textual = (mediaType: string): boolean =>
  mediaType.startsWith("text/") ||
  ["application/json", "application/xml", "application/xhtml+xml"].includes(mediaType) ||
  /^application\/[a-z0-9.+-]+\+(?:json|xml)$/.test(mediaType)

type Hop =
  | { readonly _tag: "Redirect"; readonly location: string }
  | {
    readonly _tag: "Body"
    readonly status: number
    readonly contentType: string
    readonly bytes: Buffer
    readonly cut: boolean
  }

const fail = (message: string) => new ToolExecutionError({ tool: TOOL, message })

/**
 * A body's encoding, found as browsers find it: a byte order mark, else the header's charset, else for HTML a
 * `<meta charset>` or `<meta http-equiv>` in its first 1024 bytes (older pages often declare it only there), else
 * UTF-8.
 */
const encodingOf = (bytes: Buffer, contentType: string, html: boolean): string => {
  const marked = byteOrderMark(bytes)
  if (marked !== undefined) return marked
  const declared = /charset\s*=\s*["']?([^"';\s]+)/i.exec(contentType)?.[1]
  if (declared !== undefined) return declared
  if (!html) return "utf-8"
  const meta = /<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([\w.:-]+)/i.exec(bytes.subarray(0, 1024).toString("latin1"))?.[1]
  // A page read as ASCII-compatible bytes cannot be UTF-16: such a <meta> means UTF-8.
  return meta === undefined || /^utf-?16/i.test(meta) ? "utf-8" : meta
}

/**
 * What windows-1252 bytes 0x80-0x9F stand for (the Encoding standard's table, which `iso-8859-1`, `latin1` and
 * `ascii` pages are read with too): curly quotes, dashes, the euro sign. Node's decoder gives C1 control characters
 * for them; the five bytes the table leaves unassigned stay what they are.
 */
const WINDOWS_1252_HIGH =
  "\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f" +
  "\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178"

const decode = (bytes: Buffer, contentType: string, html: boolean, cut: boolean): string => {
  let text: string
  try {
    const decoder = new TextDecoder(encodingOf(bytes, contentType, html))
    text = decoder.decode(bytes)
    if (decoder.encoding === "windows-1252") {
      text = text.replace(/[\u0080-\u009f]/g, (c) => WINDOWS_1252_HIGH[c.charCodeAt(0) - 0x80]!)
    }
  } catch {
    text = new TextDecoder("utf-8").decode(bytes)
  }
  // A cut inside a multi-byte character would show as U+FFFD: drop that partial character.
  return cut ? text.replace(/\uFFFD+$/, "") : text
}

/** zlib, loaded with the first fetch, like the TLS client (a command that never fetches does without). */
const loadZlib = Effect.promise(() => import("node:zlib"))

/** A zlib header (RFC 1950): deflate method, a window size, and a check on the first two bytes. */
const zlibHeader = (first: Buffer) => first.length >= 2 && (first[0]! & 0x0f) === 8 && first.readUInt16BE(0) % 31 === 0

/**
 * The decompressor of a `Content-Encoding`, made from the body's first bytes; undefined for an encoding not read.
 */
const decompressorFor = (
  zlib: typeof NodeZlib,
  encoding: string
): ((first: Buffer) => NodeZlib.Zlib & NodeJS.ReadWriteStream) | undefined => {
  switch (encoding) {
    case "gzip":
    case "x-gzip":
      return () => zlib.createGunzip()
    case "deflate":
      return (first) => zlibHeader(first) ? zlib.createInflate() : zlib.createInflateRaw()
    case "br":
      return () => zlib.createBrotliDecompress()
    default:
      return undefined
  }
}

/**
 * `web_fetch`: a GET over http or https that reaches only public addresses (or those the configuration allows),
 * judged on every address a name resolves to, when the connection is made, and again at every redirect.
 */
export const makeWebFetchTool = (options: WebFetchOptions) => {
  const resolve = options.resolve ?? systemResolver

  /** The address check, inside the connection: what is validated is what is connected to. */
  const guardedLookup = (refusal: { reason?: string }): LookupFunction => (hostname, lookupOptions, callback) => {
    resolve(hostname).then(
      (addresses) => {
        if (addresses.length === 0) return callback(new Error(`${hostname} resolves to no address`), "", 4)
        const refused = addresses.map((a) => forbiddenAddress(a.address, options.allowPrivate)).find((r) => r)
        if (refused !== undefined) {
          refusal.reason = `${hostname} resolves to ${refused}`
          return callback(new Error(refusal.reason), "", 4)
        }
        if (lookupOptions.all === true) return callback(null, addresses.map((a) => ({ ...a })))
        return callback(null, addresses[0]!.address, addresses[0]!.family)
      },
      (error: NodeJS.ErrnoException) => callback(error, "", 4)
    )
  }

  const checkUrl = (url: URL, raw: string): string | undefined => {
    if (url.protocol !== "http:" && url.protocol !== "https:") return `only http and https URLs, not ${url.protocol}`
    const obscured = obscuredIpv4(raw)
    if (obscured !== undefined) return obscured
    const host = url.hostname
    return isIpLiteral(host) ? forbiddenAddress(host.replace(/^\[|\]$/g, ""), options.allowPrivate) : undefined
  }

  const clientFor = (url: URL): Effect.Effect<Pick<typeof NodeHttp, "request">> =>
    url.protocol === "https:" ? Effect.promise(() => import("node:https")) : Effect.succeed(NodeHttp)

  const hop = (url: URL, limit: number) =>
    Effect.flatMap(Effect.zip(clientFor(url), loadZlib), ([client, zlib]) => hopWith(client, zlib, url, limit))

  const hopWith = (client: Pick<typeof NodeHttp, "request">, zlib: typeof NodeZlib, url: URL, limit: number) =>
    Effect.async<Hop, ToolExecutionError>((resume) => {
      const refusal: { reason?: string } = {}
      let settled = false
      const settle = (effect: Effect.Effect<Hop, ToolExecutionError>) => {
        if (settled) return
        settled = true
        resume(effect)
      }
      const request = client.request(url, {
        method: "GET",
        agent: false,
        lookup: guardedLookup(refusal),
        headers: {
          "user-agent": "myclaw",
          accept: "text/html, text/plain;q=0.9, application/json;q=0.8, */*;q=0.1",
          "accept-encoding": "identity"
        }
      }, (response) => {
        const status = response.statusCode ?? 0
        const location = response.headers.location
        if ([301, 302, 303, 307, 308].includes(status) && location !== undefined) {
          response.destroy()
          return settle(Effect.succeed({ _tag: "Redirect", location }))
        }
        const contentType = response.headers["content-type"] ?? ""
        const mediaType = contentType.split(";")[0]!.trim().toLowerCase()
        if (status >= 400) {
          response.destroy()
          return settle(Effect.fail(fail(`HTTP ${status} ${response.statusMessage ?? ""} from ${url.href}`.trim())))
        }
        if (!textual(mediaType)) {
          response.destroy()
          return settle(Effect.fail(fail(`${url.href} is ${mediaType || "of no stated type"}, not text: not read`)))
        }
        // Asked for none, a server may still compress: the body is read decompressed, the limit counting what
        // comes out (a small body that inflates to gigabytes is cut like a large one).
        const encoding = (response.headers["content-encoding"] ?? "").trim().toLowerCase()
        const decompressor = encoding === "" || encoding === "identity" ? null : decompressorFor(zlib, encoding)
        if (decompressor === undefined) {
          response.destroy()
          return settle(Effect.fail(fail(`${url.href} is sent encoded as ${encoding}: not read`)))
        }
        let decoder: NodeZlib.Zlib & NodeJS.ReadWriteStream | undefined
        const chunks: Array<Buffer> = []
        let size = 0
        const receive = (chunk: Buffer) => {
          const room = limit - size
          if (chunk.length > room) {
            chunks.push(chunk.subarray(0, room))
            response.destroy()
            decoder?.close()
            return settle(
              Effect.succeed({ _tag: "Body", status, contentType, bytes: Buffer.concat(chunks), cut: true })
            )
          }
          chunks.push(chunk)
          size += chunk.length
        }
        const finish = () =>
          settle(Effect.succeed({ _tag: "Body", status, contentType, bytes: Buffer.concat(chunks), cut: false }))
        response.on("data", (chunk: Buffer) => {
          if (decompressor === null) return receive(chunk)
          if (decoder === undefined) {
            // Made on the first bytes: HTTP's deflate comes with or without its zlib header.
            decoder = decompressor(chunk)
            decoder.on("data", receive)
            decoder.once("end", finish)
            decoder.once(
              "error",
              (error) =>
                settle(Effect.fail(fail(`${url.href} could not be decompressed (${encoding}): ${error.message}`)))
            )
          }
          decoder.write(chunk)
        })
        response.on("end", () => decoder === undefined ? finish() : decoder.end())
        response.on("error", (error) => settle(Effect.fail(fail(`${url.href}: ${error.message}`))))
      })
      request.on("error", (error) =>
        settle(Effect.fail(fail(
          refusal.reason === undefined ? `${url.href}: ${error.message}` : `refused: ${refusal.reason}`
        ))))
      request.end()
      return Effect.sync(() => request.destroy())
    })

  const render = (url: URL, body: Extract<Hop, { _tag: "Body" }>, limit: number) =>
    Effect.map(readable(body), ({ text, title }) => page(url, body, limit, text, title))

  const readable = (body: Extract<Hop, { _tag: "Body" }>) => {
    const html = /^(?:text\/html|application\/xhtml\+xml)/i.test(body.contentType)
    const raw = decode(body.bytes, body.contentType, html, body.cut)
    return html ? Effect.promise(() => htmlToText(raw)) : Effect.succeed({ text: raw.trim(), title: "" })
  }

  const page = (
    url: URL,
    body: Extract<Hop, { _tag: "Body" }>,
    limit: number,
    text: string,
    title: string
  ): ToolOutput => {
    const source = `url:${url.href}`
    const header = `${url.href} (HTTP ${body.status}, ${body.contentType || "no content type"})`
    const shown = title === "" ? text : `# ${title}\n\n${text}`
    if (body.cut) {
      const note = `cut at ${limit} bytes`
      return { status: "partial", content: `${header}\n\n${shown}\n[${note}: the rest was not read]`, source, note }
    }
    if (text === "") return { status: "empty", content: `${header}: no text`, source }
    return { status: "success", content: `${header}\n\n${shown}`, source }
  }

  const fetch = (raw: string, limit: number) =>
    Effect.gen(function*() {
      let url = new URL(raw)
      let written = raw
      for (let redirects = 0;; redirects++) {
        const refused = checkUrl(url, written)
        if (refused !== undefined) {
          return yield* fail(redirects === 0 ? `refused: ${refused}` : `refused redirect to ${url.href}: ${refused}`)
        }
        const result = yield* hop(url, limit)
        if (result._tag === "Body") return yield* render(url, result, limit)
        if (redirects === MAX_REDIRECTS) return yield* fail(`more than ${MAX_REDIRECTS} redirects from ${raw}`)
        written = result.location
        url = yield* Effect.try({
          try: () => new URL(result.location, url),
          catch: () => fail(`${url.href} redirects to an invalid URL: ${JSON.stringify(result.location)}`)
        })
        if (!/^[a-z][a-z0-9+.-]*:/i.test(written)) written = url.href
      }
    })

  return defineTool({
    name: TOOL,
    description: "Fetch a web page or text document (http or https) and return its readable text. " +
      "Only public addresses; text content only; long pages are cut.",
    parameters: Schema.Struct({
      url: HttpUrlString,
      max_bytes: Schema.optional(Schema.Int.pipe(Schema.positive()))
    }),
    hasSideEffects: false,
    external: true,
    targetKind: "host",
    target: ({ url }) => canonicalHost(url) ?? url,
    summarize: ({ url }) => `fetch ${url}`,
    execute: ({ max_bytes, url }) =>
      fetch(url, Math.min(max_bytes ?? options.maxBytes, options.maxBytes)).pipe(
        Effect.timeoutFail({
          duration: Duration.millis(options.timeoutMs),
          onTimeout: () => fail(`no complete answer from ${url} within ${options.timeoutMs} ms`)
        })
      )
  })
}
