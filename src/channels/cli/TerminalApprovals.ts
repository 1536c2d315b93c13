import { Clock, Effect, Layer, Option } from "effect"
import * as NodeOs from "node:os"
import * as NodeTty from "node:tty"
import { visible } from "../../domain/Text.js"
import { type ApprovalAsker, ApprovalRouter } from "../../services/ApprovalRouter.js"
import {
  type ApprovalAnswer,
  type ApprovalDecision,
  MAX_GRANT_MINUTES,
  type PendingApproval
} from "../../services/Approvals.js"

/** The person at the terminal, as requester and answerer: `cli:<login name>`. */
export const terminalUser = (): string => {
  try {
    return `cli:${NodeOs.userInfo().username}`
  } catch {
    return "cli:owner"
  }
}

/** Control and bidi characters shown escaped, so that text from a model or a web page cannot redraw the question. */
const printable = visible

export const describePending = (pending: PendingApproval, now: number): string => {
  const { request } = pending
  return [
    "",
    `myclaw asks for approval (session ${request.sessionId}, trace ${request.traceId}, request ${pending.requestId}):`,
    ...(request.channel.startsWith("cli") ? [] : [`  from:   ${printable(request.channel)}`]),
    `  action: ${printable(request.summary)}`,
    `  tool:   ${printable(request.tool)}${request.target ? ` on ${printable(request.target)}` : ""}`,
    `  why:    ${printable(request.reason)}`,
    `  args:   ${printable(JSON.stringify(request.args) ?? "undefined")}`,
    ...(request.tainted === null
      ? []
      : [`  This follows untrusted content from: ${printable(request.tainted.sources.join(", "))}`]),
    `  expires in ${Math.max(0, Math.round((pending.expiresAt - now) / 1000))} s`,
    `Approve? [y] once, [b N] for N minutes (default 10, at most ${MAX_GRANT_MINUTES}), [s] for this session, ` +
    "anything else denies: "
  ].join("\n")
}

/**
 * `y`/`once` once, `b` or `b N` for N minutes (default 10, at most a day), `s` for the session; anything else
 * denies.
 */
export const parseReply = (text: string): ApprovalDecision => {
  const reply = text.trim().toLowerCase()
  if (reply === "y" || reply === "yes" || reply === "once") return { _tag: "Once" }
  if (reply === "s" || reply === "session") return { _tag: "ForSession" }
  const batch = /^b(?:\s+(\d+))?$/.exec(reply)
  if (batch !== null) {
    const minutes = batch[1] === undefined ? 10 : Number(batch[1])
    if (minutes > 0 && minutes <= MAX_GRANT_MINUTES) return { _tag: "ForMinutes", minutes }
  }
  return { _tag: "Deny" }
}

// Node's line reader loads with the first question, not when serve starts listening for approvals.
const ask = (question: string) =>
  Effect.flatMap(Effect.promise(() => import("node:readline")), (Readline) =>
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
    }))

/**
 * The terminal as an approval asker: the question on stderr (stdout stays clean for `--json`), one at a time,
 * answered by the person at the terminal as `user`.
 */
export const makeTerminalAsker = (user: string) =>
  Effect.map(Effect.makeSemaphore(1), (lock): ApprovalAsker => ({
    via: "cli",
    owners: [user],
    present: (pending) =>
      lock.withPermits(1)(Effect.flatMap(Clock.currentTimeMillis, (now) => ask(describePending(pending, now)))).pipe(
        Effect.map((reply): Option.Option<ApprovalAnswer> => {
          const decision = parseReply(reply)
          return Option.some({
            requestId: pending.requestId,
            nonce: pending.nonce,
            answerer: user,
            decision,
            via: "cli",
            ...(decision._tag === "Deny" ? { reason: "denied on the terminal" } : {})
          })
        })
      )
  }))

/**
 * A terminal on stdin and stderr: only then can anybody answer there. Asked of the file descriptors, not of
 * `process.stdin`, whose first use opens a stream on it (about 2 ms of a service's start, for nothing when no one
 * is at a terminal).
 */
export const isInteractive = (): boolean => NodeTty.isatty(0) && NodeTty.isatty(2)

/** `myclaw chat`: approvals of its turn are asked on its terminal, when it has one. */
export const TerminalApprovals = Layer.scopedDiscard(Effect.gen(function*() {
  if (!isInteractive()) return
  const router = yield* ApprovalRouter
  yield* router.askOn("cli", yield* makeTerminalAsker(terminalUser()))
}))

/** `myclaw serve` in a terminal: it also answers approvals of turns whose channel cannot ask. */
export const TerminalAnswering = Layer.scopedDiscard(Effect.gen(function*() {
  if (!isInteractive()) return
  const router = yield* ApprovalRouter
  yield* router.answerFrom(yield* makeTerminalAsker(terminalUser()))
}))
