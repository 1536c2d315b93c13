import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracerLayer from "@effect/opentelemetry/OtlpTracer"
import { Config, type Duration, Effect, Layer, Option, Redacted } from "effect"
import { version } from "../Version.js"
import * as Compose from "./Compose.js"

/** Where and how spans go: the OTLP/HTTP traces URL, the service name, extra headers. */
export interface OtlpTracerOptions {
  readonly url: string
  readonly serviceName: string
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly exportInterval?: Duration.DurationInput | undefined
  readonly maxBatchSize?: number | undefined
}

/**
 * The tracer of the whole program: `@effect/opentelemetry`'s OTLP exporter with the JSON encoding
 * (`POST <url>`), batched and flushed when the layer closes; needs an HttpClient.
 */
export const OtlpTracer = (options: OtlpTracerOptions) =>
  OtlpTracerLayer.layer({
    url: options.url,
    resource: { serviceName: options.serviceName, serviceVersion: version },
    headers: options.headers ?? {},
    exportInterval: options.exportInterval,
    maxBatchSize: options.maxBatchSize
  }).pipe(Compose.provide(OtlpSerialization.layerJson))

/** `OTEL_EXPORTER_OTLP_HEADERS`: `key=value,key2=value2`, values URL-encoded (the OpenTelemetry convention). */
const parseHeaders = (text: string): Record<string, string> =>
  Object.fromEntries(
    text.split(",").filter((pair) => pair.includes("=")).map((pair) => {
      const cut = pair.indexOf("=")
      return [pair.slice(0, cut).trim(), decodeURIComponent(pair.slice(cut + 1).trim())]
    })
  )

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
    // The HTTP client (undici) is loaded only when spans are exported: a serve without OTLP never loads it.
    const { layerUndici } = yield* Effect.promise(() => import("@effect/platform-node/NodeHttpClient"))
    return OtlpTracer({
      url: url.value,
      serviceName,
      headers: Option.match(headers, { onNone: () => ({}), onSome: (value) => parseHeaders(Redacted.value(value)) })
    }).pipe(Compose.provide(layerUndici))
  })
)
