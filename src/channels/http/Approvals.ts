import { HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option, ParseResult, Schema } from "effect"
import { onFirstCall } from "../../domain/OnFirstCall.js"
import { visible, withoutBom } from "../../domain/Text.js"
import { isoAt } from "../../domain/Time.js"
import { type ApprovalAsker, ApprovalRouter } from "../../services/ApprovalRouter.js"
import { type AnswerOutcome, type ApprovalDecision, Approvals, type PendingApproval } from "../../services/Approvals.js"

/** Who answers through the HTTP approvals API: the holder of the admin token, the owner. */
export const HttpOwner = "http:admin"

/** The body of POST /v1/approvals/{id}. */
export const ApprovalAnswerBody = Schema.Struct({
  nonce: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256)),
  verdict: Schema.Literal("approve", "deny"),
  /** Approve for 10 minutes (same tool, same target) or for the rest of the session; default once. */
  grant: Schema.optional(Schema.Literal("once", "batch", "session"))
})

const decodeAnswer = onFirstCall(() =>
  Schema.decodeUnknown(ApprovalAnswerBody, { errors: "all", onExcessProperty: "error" })
)

/** The body as JSON (a leading UTF-8 byte order mark, which some clients write, left out), then as an answer. */
const decodeBody = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => request.text).pipe(
  Effect.flatMap((text) =>
    Effect.try({
      try: (): unknown => JSON.parse(withoutBom(text)),
      catch: (error) => new Error(error instanceof Error ? error.message : String(error))
    })
  ),
  Effect.flatMap((json) => decodeAnswer(json))
)

const decisionOf = (body: typeof ApprovalAnswerBody.Type): ApprovalDecision =>
  body.verdict === "deny"
    ? { _tag: "Deny" }
    : body.grant === "batch"
    ? { _tag: "ForMinutes", minutes: 10 }
    : body.grant === "session"
    ? { _tag: "ForSession" }
    : { _tag: "Once" }

/** A pending request as the API shows it: everything the owner needs to decide, and the nonce to answer with. */
export const pendingJson = (pending: PendingApproval) => ({
  id: pending.requestId,
  nonce: pending.nonce,
  session_id: pending.request.sessionId,
  trace_id: pending.request.traceId,
  channel: visible(pending.request.channel),
  tool: visible(pending.request.tool),
  target: visible(pending.request.target),
  summary: visible(pending.request.summary),
  reason: visible(pending.request.reason),
  args: pending.request.args,
  /** The arguments as a person should see them: JSON, control and bidi characters made visible. */
  args_display: visible(JSON.stringify(pending.request.args) ?? "undefined"),
  args_hash: pending.request.argsHash,
  tainted_by: pending.request.tainted?.sources.map(visible) ?? null,
  expires_at: isoAt(pending.expiresAt)
})

const refusalStatus: Record<Extract<AnswerOutcome, { accepted: false }>["reason"], number> = {
  unknown: 404,
  foreign: 403,
  nonce_mismatch: 409,
  already_answered: 409,
  expired: 410
}

const refusalMessage: Record<Extract<AnswerOutcome, { accepted: false }>["reason"], string> = {
  unknown: "no pending approval request has this id",
  foreign: "this answer does not come from the owner of the request",
  nonce_mismatch: "the nonce does not match the request's",
  already_answered: "the request was already answered",
  expired: "the request expired before this answer"
}

/** The API as an answering channel: a request is listed by GET /v1/approvals until an answer or its expiry. */
const httpAsker: ApprovalAsker = {
  via: "http",
  owners: [HttpOwner],
  present: (pending) =>
    Effect.as(
      Effect.logInfo(
        `approval ${pending.requestId} pending for ${pending.request.tool} on ${pending.request.channel}: ` +
          "GET /v1/approvals, then POST /v1/approvals/{id} with its nonce"
      ),
      Option.none()
    )
}

/**
 * GET /v1/approvals and POST /v1/approvals/{id}, behind the admin token (the caller routes them). While the
 * scope is open the API is one of the owner's answering channels: turns from channels that cannot ask wait for it.
 */
export const makeApprovalsApi = (answering: boolean) =>
  Effect.gen(function*() {
    const approvals = yield* Approvals
    if (answering) yield* (yield* ApprovalRouter).answerFrom(httpAsker)

    const list = Effect.map(
      approvals.pending,
      (pending) =>
        HttpServerResponse.unsafeJson({ approvals: pending.map(pendingJson) }, {
          headers: { "cache-control": "no-store" }
        })
    )

    const answer = Effect.gen(function*() {
      const { id } = yield* HttpRouter.params
      const decoded = yield* decodeBody.pipe(HttpIncomingMessage.withMaxBodySize(Option.some(16_384)), Effect.either)
      if (decoded._tag === "Left") {
        const error = decoded.left
        return HttpServerResponse.unsafeJson({
          error: "bad_request",
          message: ParseResult.isParseError(error)
            ? `the body must be { "nonce": string, "verdict": "approve" | "deny", "grant"?: "once" | "batch" | "session" }: ${
              ParseResult.TreeFormatter.formatErrorSync(error)
            }`
            : `the body is not valid JSON: ${error.message}`
        }, { status: 400 })
      }
      const body = decoded.right
      const outcome = yield* approvals.answer({
        requestId: id ?? "",
        nonce: body.nonce,
        answerer: HttpOwner,
        decision: decisionOf(body),
        via: "http"
      })
      if (outcome.accepted) return HttpServerResponse.unsafeJson({ accepted: true, id, verdict: body.verdict })
      return HttpServerResponse.unsafeJson(
        { accepted: false, error: outcome.reason, message: refusalMessage[outcome.reason] },
        { status: refusalStatus[outcome.reason] }
      )
    })

    return { list, answer } as const
  })
