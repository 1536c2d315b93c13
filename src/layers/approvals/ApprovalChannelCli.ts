import { Clock, Effect, Layer, Option } from "effect"
import * as Readline from "node:readline"
import {
  type ApprovalAnswer,
  ApprovalChannel,
  type ApprovalDecision,
  type PendingApproval
} from "../../services/Approvals.js"

/** Control characters shown escaped, so that text from a model or a web page cannot redraw the question. */
const printable = (text: string): string =>
  text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

export const describePending = (pending: PendingApproval, now: number): string => {
  const { request } = pending
  return [
    "",
    `myclaw asks for approval (session ${request.sessionId}, trace ${request.traceId}, request ${pending.requestId}):`,
    `  action: ${printable(request.summary)}`,
    `  tool:   ${request.tool}${request.target ? ` on ${printable(request.target)}` : ""}`,
    `  why:    ${printable(request.reason)}`,
    `  args:   ${JSON.stringify(request.args) ?? "undefined"}`,
    ...(request.tainted === null
      ? []
      : [`  This follows untrusted content from: ${printable(request.tainted.sources.join(", "))}`]),
    `  expires in ${Math.max(0, Math.round((pending.expiresAt - now) / 1000))} s`,
    "Approve? [y] once, [b N] for N minutes (default 10), [s] for this session, anything else denies: "
  ].join("\n")
}

/** `y`/`once` once, `b` or `b N` for N minutes (default 10), `s` for the session; anything else denies. */
export const parseReply = (text: string): ApprovalDecision => {
  const reply = text.trim().toLowerCase()
  if (reply === "y" || reply === "yes" || reply === "once") return { _tag: "Once" }
  if (reply === "s" || reply === "session") return { _tag: "ForSession" }
  const batch = /^b(?:\s+(\d+))?$/.exec(reply)
  if (batch !== null) {
    const minutes = batch[1] === undefined ? 10 : Number(batch[1])
    if (minutes > 0) return { _tag: "ForMinutes", minutes }
  }
  return { _tag: "Deny" }
}

const ask = (question: string) =>
  Effect.async<string>((resume) => {
    const rl = Readline.createInterface({ input: process.stdin, output: process.stderr })
    // readline swallows Ctrl-C while it asks: hand it back to the process, which stops the turn.
    rl.on("SIGINT", () => {
      rl.close()
      process.kill(process.pid, "SIGINT")
    })
    rl.question(question, (answer) => {
      rl.close()
      resume(Effect.succeed(answer))
    })
    return Effect.sync(() => rl.close())
  })

/** The person at the terminal is the owner of the session: they answer as the requester. */
const answerOf = (
  pending: PendingApproval,
  decision: ApprovalDecision,
  extra: Pick<ApprovalAnswer, "via" | "reason">
): ApprovalAnswer => ({
  requestId: pending.requestId,
  nonce: pending.nonce,
  answerer: pending.request.requester,
  decision,
  ...extra
})

export const makeApprovalChannelCli = (interactive: boolean) =>
  Effect.map(Effect.makeSemaphore(1), (lock) =>
    ApprovalChannel.of({
      present: (pending) =>
        interactive
          ? lock.withPermits(1)(
            Effect.flatMap(Clock.currentTimeMillis, (now) => ask(describePending(pending, now)))
          ).pipe(
            Effect.map((reply): Option.Option<ApprovalAnswer> => {
              const decision = parseReply(reply)
              return Option.some(answerOf(pending, decision, {
                via: "explicit",
                ...(decision._tag === "Deny" ? { reason: "denied on the terminal" } : {})
              }))
            })
          )
          : Effect.succeed(Option.some(answerOf(pending, { _tag: "Deny" }, {
            via: "non_interactive",
            reason: "nobody can answer here (no terminal), so the request is denied"
          })))
    }))

/**
 * Approvals asked on the terminal: the question goes to stderr (stdout stays clean for `--json`), one at a time.
 * Without a terminal on stdin and stderr nobody can answer, so every request is denied at once.
 */
export const ApprovalChannelCli = Layer.effect(
  ApprovalChannel,
  Effect.suspend(() => makeApprovalChannelCli(process.stdin.isTTY === true && process.stderr.isTTY === true))
)
