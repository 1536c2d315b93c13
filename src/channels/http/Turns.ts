import { HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option, ParseResult, Schema } from "effect"
import { TraceStoreError } from "../../domain/Errors.js"
import { traceToJson } from "../../domain/ExecutionTrace.js"
import { UNRECORDED } from "../../programs/turn/Messages.js"
import { AgentRuntime } from "../../services/AgentRuntime.js"
import { IdGenerator } from "../../services/IdGenerator.js"

const Identifier = (max: number) =>
  Schema.String.pipe(Schema.pattern(new RegExp(`^[\\w.:@-]{1,${max}}$`), {
    message: () => `expected letters, digits and . _ : @ - (at most ${max})`
  }))

/** The body of POST /v1/turns. */
export const TurnRequest = Schema.Struct({
  message: Schema.String.pipe(
    Schema.filter((text) => text.trim() !== "" || "expected a non-empty message"),
    Schema.maxLength(100_000)
  ),
  session_id: Schema.optional(Identifier(128)),
  /** Defaults to `http`; e.g. `http:alice` keeps the caller apart in the traces. */
  channel: Schema.optional(Identifier(64))
})

const MAX_BODY_BYTES = 1_048_576
const decodeBody = HttpServerRequest.schemaBodyJson(TurnRequest, { errors: "all", onExcessProperty: "error" })
const encodeTraceStoreError = Schema.encodeSync(TraceStoreError)

const badRequest = (message: string, details?: string) =>
  HttpServerResponse.unsafeJson({ error: "bad_request", message, ...(details === undefined ? {} : { details }) }, {
    status: 400
  })

/**
 * POST /v1/turns: the HTTP channel. Runs one turn and answers with the closed trace, encoded exactly as
 * `myclaw chat --json` prints it; a body that is not JSON or does not match `TurnRequest` gets 400 and the
 * Schema error.
 */
export const makeTurns = Effect.gen(function*() {
  const runtime = yield* AgentRuntime
  const ids = yield* IdGenerator
  return Effect.gen(function*() {
    const decoded = yield* decodeBody.pipe(
      HttpIncomingMessage.withMaxBodySize(Option.some(MAX_BODY_BYTES)),
      Effect.either
    )
    if (decoded._tag === "Left") {
      const error = decoded.left
      return ParseResult.isParseError(error)
        ? badRequest(
          "the body does not match { message: string, session_id?: string, channel?: string }",
          ParseResult.TreeFormatter.formatErrorSync(error)
        )
        : badRequest(`the body is not valid JSON (at most ${MAX_BODY_BYTES} bytes): ${error.message}`)
    }
    const body = decoded.right
    const trace = yield* runtime.handle({
      userMessage: body.message,
      sessionId: body.session_id ?? `http-${yield* ids.next("session")}`,
      channel: body.channel ?? "http"
    }).pipe(Effect.either)
    if (trace._tag === "Left") {
      yield* Effect.logError("POST /v1/turns: the trace could not be persisted", trace.left)
      return HttpServerResponse.unsafeJson(
        { error: "trace_store", ...encodeTraceStoreError(trace.left) },
        { status: 500 }
      )
    }
    const unrecorded = trace.right.metadata[UNRECORDED]
    if (typeof unrecorded === "string") {
      // Refused before any model was paid: the audit log cannot be written.
      return HttpServerResponse.unsafeJson({
        error: "unrecorded",
        message: `the turn was not run: the audit log cannot be written (${unrecorded})`,
        trace: JSON.parse(traceToJson(trace.right)) as unknown
      }, { status: 503 })
    }
    return HttpServerResponse.text(traceToJson(trace.right), { contentType: "application/json" })
  })
})
