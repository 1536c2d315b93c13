import { Effect, Layer } from "effect"
import { Approvals, type ApprovalVerdict } from "../../services/Approvals.js"
import { currentReplay } from "../../services/Replaying.js"

/**
 * The owner's recorded answers, given again in order to requests for the same tool; a request the recording
 * has no answer for is denied (`no_channel`), which the replay then reports as a difference. Nobody is asked.
 */
export const ApprovalsReplay = Layer.succeed(
  Approvals,
  Approvals.of({
    request: (request) =>
      Effect.map(currentReplay, (session): ApprovalVerdict => {
        const i = session.approvals.findIndex((answer) => answer.tool === request.tool)
        if (i < 0) {
          return {
            granted: false,
            via: "no_channel",
            reason: "replay: the recording has no answer for this request",
            requestId: null,
            argsHash: request.argsHash
          }
        }
        const { approval } = session.approvals.splice(i, 1)[0]!
        return { ...approval, requestId: null, argsHash: request.argsHash }
      }),
    pending: Effect.succeed([]),
    answer: () => Effect.succeed({ accepted: false, reason: "unknown" })
  })
)
