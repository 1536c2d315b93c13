import { Effect, Layer } from "effect"
import { type ApprovalRequest, Approvals, type ApprovalVerdict } from "../../services/Approvals.js"

/** Answers approval requests with a function: for tests, demos and embedding programs. */
export const ApprovalsScripted = (answer: (request: ApprovalRequest) => boolean | ApprovalVerdict) =>
  Layer.succeed(
    Approvals,
    Approvals.of({
      request: (request) =>
        Effect.sync(() => {
          const verdict = answer(request)
          return typeof verdict === "boolean"
            ? {
              granted: verdict,
              via: "scripted",
              reason: verdict ? "approved by script" : "denied by script",
              requestId: null,
              argsHash: request.argsHash
            }
            : verdict
        }),
      pending: Effect.succeed([]),
      answer: () => Effect.succeed({ accepted: false, reason: "unknown" } as const)
    })
  )
