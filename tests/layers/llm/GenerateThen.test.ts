import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import type { LlmResponse } from "../../../src/domain/LlmTypes.js"
import { makeLlmTiers, type TierProviders } from "../../../src/layers/llm/LlmTiers.js"
import type { Provider } from "../../../src/layers/llm/Provider.js"
import { generateThenOf } from "../../../src/services/Llm.js"
import { fake, ok, request, settings, settle } from "./support.js"

const broken = (): Provider => ({
  name: "broken",
  model: "broken",
  generate: () => Effect.die(new Error("adapter bug"))
})

/** How the call ended, in short: who answered after how many failed attempts, or which failure or defect. */
const summary = (exit: Exit.Exit<LlmResponse, unknown>): string => {
  if (Exit.isSuccess(exit)) return `${exit.value.provider} after ${exit.value.failedAttempts.length}`
  const [failure] = Cause.failures(exit.cause)
  if (failure !== undefined) {
    return typeof failure === "object" && failure !== null && "reason" in failure
      ? String(failure.reason)
      : "?"
  }
  return `defect ${[...Cause.defects(exit.cause)].map((d) => (d instanceof Error ? d.message : String(d))).join()}`
}

/** The tiers each scenario runs on, made afresh for each run (a fake provider answers from its list once). */
const scenarios: ReadonlyArray<readonly [string, () => TierProviders, string]> = [
  [
    "an answer at the first try",
    () => ({ frontier: [fake("a", [ok("hello")]).provider], "local-fast": [] }),
    "a after 0"
  ],
  ["an answer after retries and a failover", () => ({
    frontier: [fake("a", ["Server", "Server", "Server"]).provider, fake("b", [ok("from b")]).provider],
    "local-fast": []
  }), "b after 3"],
  ["a failure that ends the call", () => ({ frontier: [fake("a", ["Auth"]).provider], "local-fast": [] }), "Auth"],
  ["every provider failing", () => ({
    frontier: [fake("a", ["Server", "Server", "Server"]).provider],
    "local-fast": []
  }), "Server"],
  ["a provider's defect", () => ({ frontier: [broken()], "local-fast": [] }), "defect adapter bug"],
  ["no provider at all", () => ({ frontier: [], "local-fast": [] }), "NotConfigured"]
]

/** An exit as comparable data: its value, or its failures and defects. */
const shown = (exit: Exit.Exit<LlmResponse, unknown>) =>
  Exit.isSuccess(exit)
    ? { value: exit.value }
    : { cause: Cause.pretty(exit.cause).split("\n")[0], failures: [...Cause.failures(exit.cause)] }

describe("Llm.generateThen", () => {
  for (const [name, tiers, ended] of scenarios) {
    it.effect(`hands \`then\` what \`generate\` gives: ${name}`, () =>
      Effect.gen(function*() {
        const byGenerate = yield* Effect.exit(settle(makeLlmTiers(tiers(), settings).generate(request)))
        const handed: Array<Exit.Exit<LlmResponse, unknown>> = []
        const result = yield* settle(
          makeLlmTiers(tiers(), settings).generateThen(request, (outcome) =>
            Effect.sync(() => {
              handed.push(outcome)
              return "went on"
            }))
        )
        assert.strictEqual(result, "went on")
        assert.strictEqual(handed.length, 1)
        assert.strictEqual(summary(byGenerate), ended)
        assert.deepStrictEqual(shown(handed[0]!), shown(byGenerate))
      }))
  }

  it.effect("generateThenOf hands `then` the answer, or the whole cause of its absence", () =>
    Effect.gen(function*() {
      const answer: LlmResponse = { ...ok("hi"), provider: "a", tier: "frontier", failedAttempts: [], costUsd: 0 }
      const answered = generateThenOf(() => Effect.succeed(answer))
      const value = yield* answered(request, (outcome) => Effect.succeed(outcome))
      assert.deepStrictEqual(value, Exit.succeed(answer))
      const dying = generateThenOf(() => Effect.die("bug"))
      const cause = yield* dying(request, (outcome) => Effect.succeed(Exit.isFailure(outcome) ? outcome.cause : null))
      assert.deepStrictEqual(cause === null ? [] : [...Cause.defects(cause)], ["bug"])
    }))
})
