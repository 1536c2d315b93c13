import { Duration, Effect, Layer, Option } from "effect"
import * as Readline from "node:readline"
import { type ApprovalRequest, Approvals, type ApprovalVerdict } from "../services/Approvals.js"
import { MyclawConfig } from "../services/MyclawConfig.js"

const describe = (request: ApprovalRequest): string =>
  [
    "",
    `myclaw asks for approval (session ${request.sessionId}, trace ${request.traceId}):`,
    `  action: ${request.summary}`,
    `  tool:   ${request.tool}${request.target ? ` on ${request.target}` : ""}`,
    `  why:    ${request.reason}`,
    `  args:   ${JSON.stringify(request.args)}`,
    "Approve? [y/N] "
  ].join("\n")

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

/**
 * Approvals on the terminal: the question goes to stderr (stdout stays clean for `--json`), one at a time;
 * no answer before the timeout counts as denied. Without a terminal nobody can answer, so it denies.
 */
export const ApprovalsCli = Layer.effect(
  Approvals,
  Effect.gen(function*() {
    const { config } = yield* MyclawConfig
    const timeoutMs = config.approvals.timeoutMs
    const lock = yield* Effect.makeSemaphore(1)
    const interactive = process.stdin.isTTY === true && process.stderr.isTTY === true
    const request = (request: ApprovalRequest): Effect.Effect<ApprovalVerdict> =>
      interactive
        ? lock.withPermits(1)(ask(describe(request))).pipe(
          Effect.timeout(Duration.millis(timeoutMs)),
          Effect.option,
          Effect.map((answer) =>
            Option.match(answer, {
              onNone: (): ApprovalVerdict => ({
                granted: false,
                via: "timeout",
                reason: `no answer within ${timeoutMs / 1000} s`,
                requestId: null,
                argsHash: request.argsHash
              }),
              onSome: (text): ApprovalVerdict => ({
                granted: /^\s*y(es)?\s*$/i.test(text),
                via: "explicit",
                reason: /^\s*y(es)?\s*$/i.test(text) ? "approved on the terminal" : "denied on the terminal",
                requestId: null,
                argsHash: request.argsHash
              })
            })
          )
        )
        : Effect.succeed({
          granted: false,
          via: "non_interactive",
          reason: "nobody can answer here (no terminal), so the request is denied",
          requestId: null,
          argsHash: request.argsHash
        })
    return Approvals.of({ request, answer: () => Effect.succeed({ accepted: false, reason: "unknown" } as const) })
  })
)
