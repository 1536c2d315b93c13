import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Schema } from "effect"
import { AppConfig } from "../../../src/domain/AppConfig.js"
import { defineTool } from "../../../src/domain/Tool.js"
import { AuditLogMemory } from "../../../src/layers/audit/AuditLogMemory.js"
import { BudgetReadOnly } from "../../../src/layers/budget/BudgetLive.js"
import { IdGeneratorSequential } from "../../../src/layers/ids/IdGeneratorSequential.js"
import { LlmLive } from "../../../src/layers/llm/LlmLive.js"
import { ReplayBaseTemp } from "../../../src/layers/ReplayBase.js"
import { TestLayer } from "../../../src/layers/Test.js"
import { ToolRegistryWith } from "../../../src/layers/tools/ToolRegistryLive.js"
import { liveEval } from "../../../src/programs/replay/LiveEval.js"
import { AgentRuntime } from "../../../src/services/AgentRuntime.js"
import { Budget } from "../../../src/services/Budget.js"
import { localServer } from "../../support/LocalServer.js"

const sent: Array<string> = []
const sendMail = defineTool({
  name: "send_mail",
  description: "Send an email.",
  parameters: Schema.Struct({ to: Schema.String, body: Schema.String }),
  hasSideEffects: true,
  external: false,
  execute: ({ to }) => Effect.sync(() => (sent.push(to), { status: "success", content: `sent to ${to}` } as const))
})

const completion = (message: Record<string, unknown>, finish: string, usage: [number, number]) => ({
  body: {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1,
    model: "gpt-4o",
    choices: [{ index: 0, message: { role: "assistant", content: null, ...message }, finish_reason: finish }],
    usage: { prompt_tokens: usage[0], completion_tokens: usage[1], total_tokens: usage[0] + usage[1] }
  }
})

const pricing = {
  scripted: { inputPerMTok: 1, cachedInputPerMTok: 0.1, outputPerMTok: 2 },
  "gpt-4o": { inputPerMTok: 2.5, cachedInputPerMTok: 1.25, outputPerMTok: 10 }
}

describe("live eval against another provider", () => {
  it.scoped("reports where the tool calls depart and what it costs, and executes no side effect", () =>
    Effect.gen(function*() {
      const recorded = yield* Effect.flatMap(
        AgentRuntime,
        (runtime) => runtime.handle({ userMessage: "mail bob that I am late", sessionId: "s", channel: "cli:me" })
      ).pipe(
        Effect.provide(TestLayer({
          script: [
            {
              toolCalls: [{ name: "send_mail", args: { to: "bob@example.com", body: "late" } }],
              usage: { input: 100, output: 10 }
            },
            { text: "Mailed Bob.", usage: { input: 120, output: 5 } }
          ],
          tools: [sendMail],
          approve: () => true,
          config: { pricing }
        }))
      )
      assert.deepStrictEqual(sent, ["bob@example.com"])

      const server = yield* localServer([
        completion(
          {
            tool_calls: [{
              id: "call_1",
              type: "function",
              function: { name: "send_mail", arguments: JSON.stringify({ to: "carol@example.com", body: "late" }) }
            }]
          },
          "tool_calls",
          [1000, 40]
        ),
        completion({ content: "Mailed Carol." }, "stop", [1100, 8])
      ])
      const config = Schema.decodeUnknownSync(AppConfig)({
        tiers: { frontier: [{ provider: "openai", model: "gpt-4o", baseUrl: `${server.url}/v1` }] },
        pricing
      })
      const { rows, spentEur } = yield* Effect.gen(function*() {
        const rows = yield* liveEval([{ file: "t.json", trace: Either.right(recorded) }], {
          llm: LlmLive,
          tools: ToolRegistryWith([sendMail])
        })
        // Read back as `myclaw budget` does, once the eval's graph has closed.
        const status = yield* Effect.flatMap(Budget, (budget) => budget.status).pipe(
          Effect.provide(BudgetReadOnly.pipe(Layer.provide(Layer.merge(AuditLogMemory, IdGeneratorSequential))))
        )
        return { spentEur: status.spentEur, rows }
      }).pipe(Effect.provide(ReplayBaseTemp(config)))

      assert.strictEqual(server.requests.length, 2)
      assert.deepStrictEqual(sent, ["bob@example.com"], "no side effect ran during the live eval")
      const report = rows[0]!.report!
      assert.isTrue(report.same_outcome)
      assert.strictEqual(report.departs_at, 0)
      assert.deepStrictEqual(report.recorded.tool_calls, ["send_mail({\"body\":\"late\",\"to\":\"bob@example.com\"})"])
      assert.deepStrictEqual(report.live.tool_calls, ["send_mail({\"body\":\"late\",\"to\":\"carol@example.com\"})"])
      assert.deepStrictEqual([report.recorded.input_tokens, report.recorded.output_tokens], [220, 15])
      assert.deepStrictEqual([report.live.input_tokens, report.live.output_tokens], [2100, 48])
      assert.closeTo(report.recorded.cost_usd, (220 * 1 + 15 * 2) / 1e6, 1e-12)
      assert.closeTo(report.live.cost_usd, (2100 * 2.5 + 48 * 10) / 1e6, 1e-12)
      // The live calls went through the day's budget.
      assert.isAbove(spentEur, 0)
    }))
})
