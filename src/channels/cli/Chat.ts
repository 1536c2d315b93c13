import { Console, Effect } from "effect"
import * as NodePath from "node:path"
import { printForPeople } from "../../cli/Output.js"
import { ConfigFileError } from "../../domain/Errors.js"
import { traceToJson } from "../../domain/ExecutionTrace.js"
import { AgentRuntime } from "../../services/AgentRuntime.js"
import { AuditLog } from "../../services/AuditLog.js"
import { IdGenerator } from "../../services/IdGenerator.js"
import { Llm } from "../../services/Llm.js"
import { MyclawConfig } from "../../services/MyclawConfig.js"
import { terminalUser } from "./TerminalApprovals.js"

/** `myclaw chat`: one turn; the answer (or with --json the closed trace, alone) on stdout. */
export const chat = (
  options: { readonly message: string; readonly session: string | undefined; readonly json: boolean }
) =>
  Effect.gen(function*() {
    const llm = yield* Llm
    const { file } = yield* MyclawConfig
    if (llm.providers.length === 0) {
      return yield* new ConfigFileError({
        file,
        reason: "NoProvider",
        message: `no LLM provider is configured, so there is nobody to answer. Create ${file} with a "tiers" ` +
          `section naming a provider; ${NodePath.join(NodePath.dirname(file), "myclaw.example.json")} is a ` +
          "working example (a scripted model) to copy and edit."
      })
    }
    const runtime = yield* AgentRuntime
    const audit = yield* AuditLog
    const sessionId = options.session ?? `cli-${yield* (yield* IdGenerator).next("session")}`
    const trace = yield* runtime.handle({ userMessage: options.message, sessionId, channel: terminalUser() }).pipe(
      Effect.onInterrupt(() => Console.error("[stopped: the turn was interrupted; its trace is saved as user_aborted]"))
    )
    if (options.json) {
      yield* Console.log(traceToJson(trace))
    } else {
      yield* printForPeople(trace.final_response ?? "(no answer)")
      yield* Console.error(
        `[${trace.outcome} · ${trace.steps.length} steps · ${
          trace.cost_usd.toFixed(4)
        } USD · session ${sessionId} · trace ${trace.trace_id}]`
      )
    }
    // A turn that is not in the audit log (refused, or its summary failed) is not a success: exit non-zero.
    const failure = yield* audit.lastFailure
    if (failure._tag === "Some") return yield* failure.value
  })
