import { Console, Effect } from "effect"
import { randomBytes } from "node:crypto"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { ConfigFileError } from "../domain/Errors.js"
import { traceToJson } from "../domain/ExecutionTrace.js"
import { AgentRuntime } from "../services/AgentRuntime.js"
import { Llm } from "../services/Llm.js"
import { MyclawConfig } from "../services/MyclawConfig.js"

const owner = (): string => {
  try {
    return NodeOs.userInfo().username
  } catch {
    return "owner"
  }
}

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
    const sessionId = options.session ?? `cli-${randomBytes(4).toString("hex")}`
    const trace = yield* runtime.handle({ userMessage: options.message, sessionId, channel: `cli:${owner()}` }).pipe(
      Effect.onInterrupt(() => Console.error("[stopped: the turn was interrupted; its trace is saved as user_aborted]"))
    )
    if (options.json) {
      yield* Console.log(traceToJson(trace))
    } else {
      yield* Console.log(trace.final_response ?? "(no answer)")
      yield* Console.error(
        `[${trace.outcome} · ${trace.steps.length} steps · ${
          trace.cost_usd.toFixed(4)
        } USD · session ${sessionId} · trace ${trace.trace_id}]`
      )
    }
  })
