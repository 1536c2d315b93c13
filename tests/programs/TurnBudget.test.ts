import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger, LogLevel } from "effect"
import * as NodePath from "node:path"
import type { ThoughtStep } from "../../src/domain/ExecutionTrace.js"
import { LlmLive } from "../../src/layers/llm/LlmLive.js"
import { TestLayer } from "../../src/layers/Test.js"
import { AgentRuntime } from "../../src/services/AgentRuntime.js"

/** Two tiers of scripted models with prices: `big` (frontier) costs 1 EUR per 1,000 input tokens. */
const twoTiers = (frontier: ReadonlyArray<object>, localFast: ReadonlyArray<object>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const dir = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-tiers-" })
    yield* fs.writeFileString(NodePath.join(dir, "big.json"), JSON.stringify(frontier))
    yield* fs.writeFileString(NodePath.join(dir, "small.json"), JSON.stringify(localFast))
    return {
      tiers: {
        frontier: [{ provider: "scripted" as const, script: NodePath.join(dir, "big.json"), model: "big" }],
        "local-fast": [{ provider: "scripted" as const, script: NodePath.join(dir, "small.json"), model: "small" }]
      },
      pricing: {
        big: { inputPerMTok: 1000, cachedInputPerMTok: 0, outputPerMTok: 0 },
        small: { inputPerMTok: 0, cachedInputPerMTok: 0, outputPerMTok: 0 }
      },
      usdToEur: 1,
      budget: { softCapEur: 1, hardCapEur: 3 }
    }
  }).pipe(Effect.provide(NodeContext.layer))

const turn = (message: string) =>
  Effect.flatMap(AgentRuntime, (agent) => agent.handle({ userMessage: message, sessionId: "s", channel: "test" }))
const tiersOf = (steps: ReadonlyArray<{ kind: string }>) =>
  steps.filter((s): s is ThoughtStep => s.kind === "thought").map((t) => `${t.tier}:${t.model}`)

describe("the turn and the budget", () => {
  it.scoped("over the soft cap Thoughts go to local-fast, and the first answer after crossing says so once", () =>
    Effect.gen(function*() {
      const config = yield* twoTiers(
        [{ text: "expensive answer", usage: { input: 1200, output: 0 } }],
        [{ text: "cheap one" }, { text: "cheap two" }]
      )
      const [first, second, third] = yield* Effect.all([turn("a"), turn("b"), turn("c")]).pipe(
        Effect.provide(TestLayer({ llm: LlmLive, config })),
        Logger.withMinimumLogLevel(LogLevel.None)
      )
      assert.deepStrictEqual(tiersOf(first!.steps), ["frontier:big"])
      assert.include(first!.final_response!, "soft cap")
      assert.deepStrictEqual(tiersOf(second!.steps), ["local-fast:small"])
      assert.strictEqual(second!.final_response, "cheap one")
      assert.strictEqual(third!.final_response, "cheap two")
    }))

  it.scoped("over the soft cap, a call whose policy rule forces the frontier sends the next Thought there", () =>
    Effect.gen(function*() {
      const config = yield* twoTiers(
        [{ text: "expensive answer", usage: { input: 1200, output: 0 } }, { text: "after the call" }],
        [{ toolCalls: [{ name: "now", args: {} }] }, { text: "never asked: the call forced the frontier" }]
      )
      const rules = [{ match: "now", decision: "allow" as const, forceTier: "frontier" as const }]
      const [, second] = yield* Effect.all([turn("a"), turn("b")]).pipe(
        Effect.provide(TestLayer({ llm: LlmLive, config: { ...config, policy: { rules, trusted: [] } } })),
        Logger.withMinimumLogLevel(LogLevel.None)
      )
      assert.deepStrictEqual(tiersOf(second!.steps), ["local-fast:small", "frontier:big"])
      assert.strictEqual(second!.final_response, "after the call")
    }))

  it.scoped("a turn that crosses the hard cap mid-way stops before its next Thought", () =>
    Effect.gen(function*() {
      const config = yield* twoTiers(
        [
          { toolCalls: [{ name: "now", args: {} }], usage: { input: 3100, output: 0 } },
          { text: "never asked" }
        ],
        []
      )
      const trace = yield* turn("a").pipe(
        Effect.provide(
          TestLayer({ llm: LlmLive, config: { ...config, tiers: { ...config.tiers, "local-fast": [] } } })
        ),
        Logger.withMinimumLogLevel(LogLevel.None)
      )
      assert.strictEqual(trace.outcome, "budget_hit")
      assert.deepStrictEqual(tiersOf(trace.steps), ["frontier:big"])
      assert.include(trace.final_response!, "until it resets at")
    }))

  it.scoped("a call whose maximum cost would pass the hard cap is not made", () =>
    Effect.gen(function*() {
      const config = yield* twoTiers([{ text: "never asked" }], [])
      const trace = yield* turn("x".repeat(9000)).pipe(
        Effect.provide(TestLayer({
          llm: LlmLive,
          config: { ...config, tiers: { ...config.tiers, "local-fast": [] }, budget: { softCapEur: 1, hardCapEur: 2 } }
        })),
        Logger.withMinimumLogLevel(LogLevel.None)
      )
      assert.strictEqual(trace.outcome, "budget_hit")
      assert.deepStrictEqual(tiersOf(trace.steps), [])
      assert.deepInclude(trace.metadata.error as object, { _tag: "BudgetExceeded" })
      // Nothing is spent: the answer says that this one call is too large, not that the budget is spent.
      assert.notInclude(trace.final_response!, "budget is spent")
      assert.match(trace.final_response!, /could cost up to [34]\.\d{4} EUR \(big: .* up to 4096 output tokens\)/)
      assert.include(trace.final_response!, "more than the 2.0000 EUR left of the 2.00 EUR hard cap")
      assert.include(trace.final_response!, "maxTokens")
    }))
})
