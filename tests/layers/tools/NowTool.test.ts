import { assert, describe, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { TestLayer } from "../../../src/layers/Test.js"
import { AgentRuntime } from "../../../src/services/AgentRuntime.js"
import { actions } from "../../contract/fixtures.js"

const at = Date.parse("2026-07-01T22:30:00Z")
const machineZone = Intl.DateTimeFormat().resolvedOptions().timeZone
const wall = (timeZone: string) => new Date(at).toLocaleString("sv-SE", { timeZone })

const nowResult = (timeZone: string) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(at)
    const trace = yield* Effect.flatMap(
      AgentRuntime,
      (agent) => agent.handle({ userMessage: "what time is it?", sessionId: "s", channel: "cli:me" })
    )
    return actions(trace)[0]?.exec_result?.content ?? ""
  }).pipe(Effect.provide(TestLayer({
    config: { budget: { timeZone } },
    script: [{ toolCalls: [{ name: "now", args: {} }] }, { text: "It is late." }]
  })))

describe("now", () => {
  it.scoped("gives the owner's time too (budget.timeZone), where the machine's clock reads otherwise", () =>
    Effect.gen(function*() {
      // Auckland is UTC+12 in July: the owner's day is already the next one (another zone on a machine there).
      const owner = wall("Pacific/Auckland") === wall(machineZone) ? "America/Los_Angeles" : "Pacific/Auckland"
      const content = yield* nowResult(owner)
      assert.strictEqual(
        content,
        `2026-07-01T22:30:00.000Z (local ${wall(machineZone)} ${machineZone}; for the owner, in ${owner}: ${
          wall(owner)
        })`
      )
      assert.strictEqual(
        yield* nowResult(machineZone),
        `2026-07-01T22:30:00.000Z (local ${wall(machineZone)} ${machineZone})`
      )
    }))
})
