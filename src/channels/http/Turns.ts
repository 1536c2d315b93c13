import { HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Cause, Duration, Effect, Either, Exit, Fiber, FiberSet, Option, ParseResult, Schema, Stream } from "effect"
import * as NodeHttp from "node:http"
import { isAbsentAlternative } from "../../domain/ConfigProblems.js"
import { messageOf, TraceStoreError } from "../../domain/Errors.js"
import { type ExecutionTrace, traceToJson } from "../../domain/ExecutionTrace.js"
import { onFirstCall } from "../../domain/OnFirstCall.js"
import { sha256Hex } from "../../domain/Sha256.js"
import { truncateEnd, withoutBom } from "../../domain/Text.js"
import { waitCleanedUp } from "../../programs/AsyncWait.js"
import { makeOneAtATime } from "../../programs/OneAtATime.js"
import { IMMEDIATE_RULES, ruleCommand } from "../../programs/rules/Rules.js"
import { UNRECORDED } from "../../programs/turn/Messages.js"
import { type TurnProgress, TurnProgressListener } from "../../programs/turn/Progress.js"
import { AgentRuntime, type TurnInput } from "../../services/AgentRuntime.js"
import { IdGenerator } from "../../services/IdGenerator.js"
import { TraceStore } from "../../services/TraceStore.js"
import { type Answered, idempotencyKeyOf, makeIdempotency } from "./Idempotency.js"

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
  /** Defaults to `http`; `alice` or `http:alice` keeps the caller apart in the traces (always under `http:`). */
  channel: Schema.optional(Identifier(64))
})

/** The largest body POST /v1/turns reads; a larger one is answered 413 (and drained, never half-read). */
export const MAX_BODY_BYTES = 1_048_576
const decodeTurnRequest = onFirstCall(() =>
  Schema.decodeUnknownEither(TurnRequest, { errors: "all", onExcessProperty: "error" })
)
const encodeTraceStoreError = onFirstCall(() => Schema.encodeSync(TraceStoreError))

const problem = (status: number, error: string, message: string, extra: Record<string, unknown> = {}) =>
  HttpServerResponse.unsafeJson({ error, message, ...extra }, { status })

const badRequest = (message: string, details?: ReadonlyArray<string>) =>
  problem(400, "bad_request", message, details === undefined ? {} : { details })

/**
 * What a retry with the same Idempotency-Key is answered with: the turn's trace (read again from the store), or
 * the problem the turn ended with after it ran. A turn that did not run (503) keeps nothing: a retry runs it.
 */
type Kept =
  | { readonly _tag: "Trace"; readonly traceId: string }
  | { readonly _tag: "Problem"; readonly status: number; readonly body: Record<string, unknown> }

const REPLAYED = "idempotent-replayed"

/** The channel of an HTTP turn: `http`, or `http:<what the caller chose>`, so no caller can pose as the CLI. */
export const httpChannel = (requested: string | undefined): string =>
  requested === undefined || requested === "http"
    ? "http"
    : requested.startsWith("http:")
    ? requested
    : `http:${requested}`

/** One problem of a body, for people: the field, then what is wrong, without Schema's type notation. */
const describeIssue = (issue: ParseResult.ArrayFormatterIssue): string => {
  const field = issue.path.length === 0 ? "the body" : issue.path.join(".")
  if (issue._tag === "Missing") return `${field}: is missing`
  if (issue._tag === "Unexpected") return `${field}: is not a known field`
  const typed = /^Expected (.+?), actual ([\s\S]*)$/.exec(issue.message)
  if (typed === null) return `${field}: ${issue.message}`
  const [, expected, actual] = typed as unknown as [string, string, string]
  const got = truncateEnd(actual, 40)
  return /[{}[\]|<]|readonly/.test(expected)
    ? `${field}: ${issue.path.length === 0 ? "expected a JSON object" : "has the wrong type"}, got ${got}`
    : `${field}: expected ${
      /^an? /.test(expected) ? "" : /^[aeiou]/.test(expected) ? "an " : "a "
    }${expected}, got ${got}`
}

/** The media type of a request (`application/json` in `application/json; charset=utf-8`), lower case. */
const mediaType = (contentType: string | undefined) => (contentType ?? "").split(";")[0]!.trim().toLowerCase()
const isJson = (type: string) => type === "application/json" || /^application\/[\w.+-]+\+json$/.test(type)

/** The chunks of a body as they come, the first `limit` bytes of it kept. */
class LimitedBody {
  bytes = 0
  readonly chunks: Array<Uint8Array> = []
  constructor(readonly limit: number) {}
  add(chunk: Uint8Array): void {
    this.bytes += chunk.length
    if (this.bytes <= this.limit) this.chunks.push(chunk)
  }
  /** The text, or none when the body was longer than the limit. */
  get text(): Option.Option<string> {
    return this.bytes > this.limit ? Option.none() : Option.some(Buffer.concat(this.chunks).toString("utf8"))
  }
}

/**
 * The body as text, at most `limit` bytes: a longer body is read to its end and dropped (the answer then reaches
 * the client; cutting the connection would not), and reported as too large. From Node's request itself, with its
 * events (the request's `stream`, a Stream over the same events, costs several hundred runtime operations a body);
 * through `stream` when the server is another.
 */
export const readLimited = (
  request: HttpServerRequest.HttpServerRequest,
  limit: number
): Effect.Effect<Option.Option<string>, HttpServerError.RequestError> => {
  const source: unknown = NodeHttpServerRequest.toIncomingMessage(request)
  if (!(source instanceof NodeHttp.IncomingMessage)) {
    return Effect.map(
      Stream.runFold(request.stream, new LimitedBody(limit), (body, chunk) => {
        body.add(chunk)
        return body
      }),
      (body) => body.text
    )
  }
  return waitCleanedUp((resume) => {
    const body = new LimitedBody(limit)
    const onData = (chunk: Buffer) => body.add(chunk)
    const onEnd = () => {
      stop()
      resume(Effect.succeed(body.text))
    }
    const onError = (cause: Error) => {
      stop()
      resume(Effect.fail(new HttpServerError.RequestError({ request, reason: "Decode", cause })))
    }
    const stop = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
    }
    source.on("data", onData)
    source.once("end", onEnd)
    source.once("error", onError)
    // The client went away (the server interrupts the request's fiber): the listeners go with it.
    return stop
  })
}

/**
 * POST /v1/turns: the HTTP channel. Runs one turn and answers with the closed trace, encoded exactly as
 * `myclaw chat --json` prints it. A body that is not declared JSON gets 415, one over MAX_BODY_BYTES 413, one
 * that is not JSON or does not match `TurnRequest` 400 with one line per problem.
 */
export const makeTurns = Effect.gen(function*() {
  const runtime = yield* AgentRuntime
  const ids = yield* IdGenerator
  const store = yield* TraceStore
  const idempotency = yield* makeIdempotency<Kept>()
  // The turns in flight, so that a shutdown can wait for them, then interrupt them (closed with the scope).
  const running = yield* FiberSet.make<ExecutionTrace, TraceStoreError>()
  // The turns of one session run in the order they came, each seeing those before it in its history.
  const sessions = makeOneAtATime()
  let draining = false

  /**
   * Stops taking turns (503), waits up to `graceMs` for those in flight, then interrupts the rest: each ends
   * `user_aborted`, its trace persisted, its caller answered.
   */
  const drain = (graceMs: number) =>
    Effect.gen(function*() {
      draining = true
      const inFlight = yield* FiberSet.size(running)
      if (inFlight === 0) return
      yield* Effect.logInfo(`shutdown: waiting up to ${graceMs} ms for ${inFlight} turns in flight`)
      // Finalizers run uninterruptibly: the wait is made interruptible so that the deadline can end it.
      const finished = yield* Effect.interruptible(FiberSet.awaitEmpty(running)).pipe(
        Effect.timeoutOption(Duration.millis(graceMs))
      )
      if (Option.isSome(finished)) return
      yield* Effect.logWarning(
        `shutdown: ${yield* FiberSet.size(running)} turns still running after ${graceMs} ms: interrupted (user_aborted)`
      )
      yield* FiberSet.clear(running)
      yield* FiberSet.awaitEmpty(running)
    })

  const shuttingDown = HttpServerResponse.unsafeJson(
    { error: "shutting_down", message: "the service is stopping: no new turns" },
    { status: 503, headers: { "retry-after": "5" } }
  )

  /** Runs the turn and answers with its trace. */
  const runTurn = (input: TurnInput): Effect.Effect<Answered<Kept>> =>
    Effect.gen(function*() {
      // A turn that waited for its session while the service began to stop is not started.
      if (draining) return { response: shuttingDown, kept: undefined }
      // A turn interrupted by /stop ends user_aborted with a trace, but its fiber ends interrupted: its trace is
      // the one it reports closed.
      let closed: ExecutionTrace | undefined
      const listen = (progress: TurnProgress) =>
        Effect.sync(() => {
          if (progress._tag === "Closed") closed = progress.trace
        })
      const turn = yield* FiberSet.run(running, Effect.locally(runtime.handle(input), TurnProgressListener, listen))
      // A client that goes away interrupts its turn (which then ends user_aborted and releases its budget).
      const exit = yield* Fiber.await(turn).pipe(Effect.onInterrupt(() => Fiber.interrupt(turn)))
      const interrupted = Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)
      // Stopped by /stop: answered with its trace. Interrupted by the shutdown: the caller is told so.
      const stopped = interrupted && !draining ? closed : undefined
      if (interrupted && stopped === undefined) {
        const response = HttpServerResponse.unsafeJson(
          {
            error: "shutting_down",
            message: "the service stopped before the turn ended; it is recorded as user_aborted"
          },
          { status: 503 }
        )
        return { response, kept: undefined }
      }
      const trace = stopped === undefined ? yield* Effect.either(exit) : Either.right(stopped)
      if (trace._tag === "Left") {
        yield* Effect.logError("POST /v1/turns: the trace could not be persisted", trace.left)
        const body = { error: "trace_store", ...encodeTraceStoreError(trace.left) }
        return {
          response: HttpServerResponse.unsafeJson(body, { status: 500 }),
          kept: { _tag: "Problem", status: 500, body }
        }
      }
      const unrecorded = trace.right.metadata[UNRECORDED]
      if (typeof unrecorded === "string") {
        // Refused before any model was paid: the audit log cannot be written.
        const response = HttpServerResponse.unsafeJson({
          error: "unrecorded",
          message: `the turn was not run: the audit log cannot be written (${unrecorded})`,
          trace: JSON.parse(traceToJson(trace.right)) as unknown
        }, { status: 503 })
        return { response, kept: undefined }
      }
      return {
        response: HttpServerResponse.text(traceToJson(trace.right), { contentType: "application/json" }),
        kept: { _tag: "Trace", traceId: trace.right.trace_id }
      }
    })

  /** What a retry is answered with, marked as a replay. */
  const replay = (kept: Kept) =>
    Effect.gen(function*() {
      if (kept._tag === "Problem") return HttpServerResponse.unsafeJson(kept.body, { status: kept.status })
      const trace = yield* Effect.either(store.get(kept.traceId))
      if (trace._tag === "Right" && Option.isSome(trace.right)) {
        return HttpServerResponse.text(traceToJson(trace.right.value), { contentType: "application/json" })
      }
      if (trace._tag === "Left") yield* Effect.logError("POST /v1/turns: a kept trace could not be read", trace.left)
      return problem(
        500,
        "trace_store",
        `this Idempotency-Key's turn ran as trace ${kept.traceId}, which cannot be read now`
      )
    }).pipe(Effect.map(HttpServerResponse.setHeader(REPLAYED, "true")))

  const handle = Effect.gen(function*() {
    if (draining) return shuttingDown
    const request = yield* HttpServerRequest.HttpServerRequest
    const type = mediaType(request.headers["content-type"])
    if (!isJson(type)) {
      return problem(
        415,
        "unsupported_media_type",
        `the body must be JSON sent with Content-Type: application/json${type === "" ? "" : ` (got ${type})`}`
      )
    }
    const tooLarge = problem(
      413,
      "payload_too_large",
      `the body is larger than ${MAX_BODY_BYTES} bytes (1 MiB); a message is at most 100,000 characters`,
      { max_bytes: MAX_BODY_BYTES }
    )
    const key = idempotencyKeyOf(request.headers["idempotency-key"])
    if (Either.isLeft(key)) return badRequest(key.left)
    const declared = Number(request.headers["content-length"] ?? "0")
    if (declared > MAX_BODY_BYTES) return tooLarge
    const text = yield* readLimited(request, MAX_BODY_BYTES)
    if (Option.isNone(text)) return tooLarge
    let json: unknown
    try {
      // A UTF-8 byte order mark (some clients write one) is not part of the JSON.
      json = JSON.parse(withoutBom(text.value))
    } catch (error) {
      return badRequest(`the body is not valid JSON: ${messageOf(error)}`)
    }
    const decoded = decodeTurnRequest(json)
    if (decoded._tag === "Left") {
      return badRequest(
        "the body does not match { message: string, session_id?: string, channel?: string }",
        ParseResult.ArrayFormatter.formatErrorSync(decoded.left).filter((issue) => !isAbsentAlternative(issue))
          .map(describeIssue)
      )
    }
    const body = decoded.right
    const input: TurnInput = {
      userMessage: body.message,
      sessionId: body.session_id ?? `http-${yield* ids.next("session")}`,
      channel: httpChannel(body.channel)
    }
    // A new session has nothing to wait for; /stop, /status and /budget act on what runs, so they never wait.
    const rule = ruleCommand(body.message)
    const work = body.session_id === undefined || (rule !== undefined && IMMEDIATE_RULES.has(rule.name))
      ? runTurn(input)
      : sessions.run(
        input.sessionId,
        runTurn(input),
        (ahead) =>
          Effect.logInfo(
            `POST /v1/turns: session ${input.sessionId} is busy; this turn waits for the turn before it ` +
              `(${ahead} ahead of it)`
          )
      )
    if (Option.isNone(key.right)) return (yield* work).response
    // Keys are the caller's: each channel has its own.
    const fingerprint = sha256Hex(JSON.stringify([body.message, body.session_id ?? null, input.channel]))
    const outcome = yield* idempotency.once(`${input.channel} ${key.right.value}`, fingerprint, work)
    switch (outcome._tag) {
      case "Answered":
        return outcome.answered.response
      case "Joined":
        return HttpServerResponse.setHeader(outcome.answered.response, REPLAYED, "true")
      case "Replay":
        return yield* replay(outcome.kept)
      case "Reused":
        return problem(
          422,
          "idempotency_key_reused",
          "this Idempotency-Key was sent with another request (message, session_id or channel) in the last 24 h: " +
            "a new request needs a new key"
        )
    }
  })
  return { handle, drain }
})
