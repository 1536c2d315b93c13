import { HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Cause, Config, Context, Duration, Effect, Exit, Layer, Option, Redacted, Tracer } from "effect"
import { version } from "../Version.js"

/**
 * Spans exported over OTLP/HTTP with the JSON encoding (`POST <endpoint>/v1/traces`), batched every few
 * seconds and flushed when the layer closes. It stands in for `@effect/opentelemetry`'s `Otlp.layerJson`,
 * which is not installed: the wire format is the same, so swapping it in changes this file only.
 */
export interface OtlpTracerOptions {
  readonly url: string
  readonly serviceName: string
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly exportInterval?: Duration.DurationInput | undefined
  readonly maxBatchSize?: number | undefined
}

type AnyValue =
  | { readonly stringValue: string }
  | { readonly boolValue: boolean }
  | { readonly intValue: number }
  | { readonly doubleValue: number }
  | { readonly arrayValue: { readonly values: ReadonlyArray<AnyValue> } }

const anyValue = (value: unknown): AnyValue => {
  if (typeof value === "string") return { stringValue: value }
  if (typeof value === "boolean") return { boolValue: value }
  if (typeof value === "number") return Number.isInteger(value) ? { intValue: value } : { doubleValue: value }
  if (typeof value === "bigint") return { intValue: Number(value) }
  if (Array.isArray(value)) return { arrayValue: { values: value.map(anyValue) } }
  try {
    return { stringValue: JSON.stringify(value) ?? String(value) }
  } catch {
    return { stringValue: String(value) }
  }
}
const attributes = (entries: Iterable<readonly [string, unknown]>) =>
  [...entries].map(([key, value]) => ({ key, value: anyValue(value) }))

const spanKinds: Record<Tracer.SpanKind, number> = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 }
const randomHex = (length: number) => {
  let hex = ""
  while (hex.length < length) hex += Math.floor(Math.random() * 0x100000000).toString(16).padStart(8, "0")
  return hex.slice(0, length)
}

class OtlpSpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly spanId = randomHex(16)
  readonly traceId: string
  readonly sampled = true
  readonly attributes = new Map<string, unknown>()
  readonly links: Array<Tracer.SpanLink>
  readonly events: Array<readonly [string, bigint, Record<string, unknown> | undefined]> = []
  status: Tracer.SpanStatus
  constructor(
    readonly name: string,
    readonly parent: Option.Option<Tracer.AnySpan>,
    readonly context: Context.Context<never>,
    links: ReadonlyArray<Tracer.SpanLink>,
    startTime: bigint,
    readonly kind: Tracer.SpanKind,
    private readonly onEnd: (span: OtlpSpan) => void
  ) {
    this.traceId = Option.isSome(parent) ? parent.value.traceId : randomHex(32)
    this.links = [...links]
    this.status = { _tag: "Started", startTime }
  }
  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>) {
    this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
    this.onEnd(this)
  }
  attribute(key: string, value: unknown) {
    this.attributes.set(key, value)
  }
  event(name: string, startTime: bigint, attributes?: Record<string, unknown>) {
    this.events.push([name, startTime, attributes])
  }
  addLinks(links: ReadonlyArray<Tracer.SpanLink>) {
    this.links.push(...links)
  }
}

const toOtlp = (span: OtlpSpan) => {
  const status = span.status as Extract<Tracer.SpanStatus, { _tag: "Ended" }>
  const failed = Exit.isFailure(status.exit) && !Cause.isInterruptedOnly(status.exit.cause)
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    ...(Option.isSome(span.parent) ? { parentSpanId: span.parent.value.spanId } : {}),
    name: span.name,
    kind: spanKinds[span.kind],
    startTimeUnixNano: String(status.startTime),
    endTimeUnixNano: String(status.endTime),
    attributes: attributes(span.attributes),
    events: span.events.map(([name, at, attrs]) => ({
      name,
      timeUnixNano: String(at),
      attributes: attributes(Object.entries(attrs ?? {}))
    })),
    links: span.links.map((link) => ({
      traceId: link.span.traceId,
      spanId: link.span.spanId,
      attributes: attributes(Object.entries(link.attributes))
    })),
    status: failed && Exit.isFailure(status.exit)
      ? { code: 2, message: Cause.pretty(status.exit.cause).split("\n")[0] }
      : { code: 1 }
  }
}

/** At most this many ended spans wait for export; beyond, new ones are dropped (a collector that is down). */
const MAX_QUEUED = 10_000

export const makeOtlpTracer = (options: OtlpTracerOptions) =>
  Effect.gen(function*() {
    const client = HttpClient.filterStatusOk(yield* HttpClient.HttpClient)
    const queue: Array<ReturnType<typeof toOtlp>> = []
    const resource = { attributes: attributes([["service.name", options.serviceName], ["service.version", version]]) }
    let warned = false
    const exportBatch = Effect.suspend(() => {
      const spans = queue.splice(0, options.maxBatchSize ?? 1000)
      const body = { resourceSpans: [{ resource, scopeSpans: [{ scope: { name: "myclaw", version }, spans }] }] }
      return client.execute(HttpClientRequest.post(options.url).pipe(
        HttpClientRequest.setHeaders(options.headers ?? {}),
        HttpClientRequest.bodyUnsafeJson(body)
      )).pipe(
        Effect.flatMap((response) => response.text),
        Effect.asVoid,
        Effect.catchAll((error) => {
          const log = warned ? Effect.logDebug : Effect.logWarning
          warned = true
          return log(`OTLP export to ${options.url} failed, ${spans.length} spans dropped: ${error.message}`)
        })
      )
    })
    const flush = Effect.whileLoop({ while: () => queue.length > 0, body: () => exportBatch, step: () => {} }).pipe(
      Effect.withTracerEnabled(false)
    )
    const interval = options.exportInterval ?? "5 seconds"
    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(interval), flush)))
    yield* Effect.addFinalizer(() => Effect.ignore(Effect.timeout(flush, "3 seconds")))
    const ended = (span: OtlpSpan) => {
      if (queue.length < MAX_QUEUED) queue.push(toOtlp(span))
    }
    return Tracer.make({
      span: (name, parent, context, links, startTime, kind) =>
        new OtlpSpan(name, parent, context, links, startTime, kind, ended),
      context: (f) => f()
    })
  })

/** The tracer of the whole program, exporting to `options.url`; needs an HttpClient. */
export const OtlpTracer = (options: OtlpTracerOptions) =>
  Layer.unwrapScoped(Effect.map(makeOtlpTracer(options), Layer.setTracer))

/** `OTEL_EXPORTER_OTLP_HEADERS`: `key=value,key2=value2`, values URL-encoded (the OpenTelemetry convention). */
const parseHeaders = (text: string): Record<string, string> =>
  Object.fromEntries(text.split(",").filter((pair) => pair.includes("=")).map((pair) => {
    const cut = pair.indexOf("=")
    return [pair.slice(0, cut).trim(), decodeURIComponent(pair.slice(cut + 1).trim())]
  }))

/**
 * Spans over OTLP/HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` (base URL, `/v1/traces` appended) or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (full URL) is set, `Layer.empty` otherwise. `OTEL_SERVICE_NAME` names
 * the service (default myclaw); `OTEL_EXPORTER_OTLP_HEADERS` is a secret and never logged.
 */
export const TelemetryLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const base = yield* Config.option(Config.string("OTEL_EXPORTER_OTLP_ENDPOINT"))
    const traces = yield* Config.option(Config.string("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
    const url = Option.orElse(traces, () => Option.map(base, (endpoint) => `${endpoint.replace(/\/+$/, "")}/v1/traces`))
    if (Option.isNone(url)) return Layer.empty
    const serviceName = yield* Config.string("OTEL_SERVICE_NAME").pipe(Config.withDefault("myclaw"))
    const headers = yield* Config.option(Config.redacted("OTEL_EXPORTER_OTLP_HEADERS"))
    yield* Effect.logInfo(`exporting spans over OTLP/HTTP to ${url.value.replace(/\/\/[^/@]*@/, "//")}`)
    return OtlpTracer({
      url: url.value,
      serviceName,
      headers: Option.match(headers, { onNone: () => ({}), onSome: (value) => parseHeaders(Redacted.value(value)) })
    }).pipe(Layer.provide(NodeHttpClient.layerUndici))
  })
)
