import { Effect, Layer } from "effect"
import type { ApprovalRecord, ExecutionTrace } from "../../domain/ExecutionTrace.js"
import { Approvals } from "../../services/Approvals.js"

/**
 * The owner's recorded answers, given again in order to requests for the same tool; a request the recording
 * has no answer for is denied (`no_channel`), which the replay then reports as a difference. Nobody is asked.
 */
export const ApprovalsReplay = (recorded: ExecutionTrace) =>
  Layer.sync(Approvals, () => {
    const answers: Array<{ readonly tool: string; readonly approval: ApprovalRecord }> = []
    for (const step of recorded.steps) {
      if (step.kind === "action" && step.approval !== null) {
        answers.push({ tool: step.tool_name, approval: step.approval })
      }
    }
    return Approvals.of({
      request: (request) =>
        Effect.sync(() => {
          const i = answers.findIndex((answer) => answer.tool === request.tool)
          if (i < 0) {
            return {
              granted: false,
              via: "no_channel",
              reason: "replay: the recording has no answer for this request",
              requestId: null,
              argsHash: request.argsHash
            }
          }
          const { approval } = answers.splice(i, 1)[0]!
          return { ...approval, requestId: null, argsHash: request.argsHash }
        }),
      pending: Effect.succeed([]),
      answer: () => Effect.succeed({ accepted: false, reason: "unknown" })
    })
  })
