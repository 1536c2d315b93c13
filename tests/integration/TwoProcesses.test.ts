import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { myclaw, workspaceWith } from "../support/Cli.js"
import { auditTraceCounts, budgetTotals, postTurn, readTraceFiles, serve } from "../support/Serve.js"

/** 7 output tokens at 1000 USD per million: every call costs 0.007 USD (= EUR here). */
const config = {
  tiers: { frontier: [{ provider: "scripted", script: "script.json", model: "shared-model", loop: true }] },
  pricing: { "shared-model": { inputPerMTok: 0, cachedInputPerMTok: 0, outputPerMTok: 1000 } },
  usdToEur: 1,
  budget: { softCapEur: 1_000_000, hardCapEur: 1_000_000, timeZone: "UTC" }
}
const script = Array.from({ length: 200 }, (_, i) => ({
  text: `answer ${i} ${"b".repeat(500)}`,
  usage: { input: 50, output: 7 },
  delayMs: (i % 3) * 10
}))
/** At least this many HTTP turns, and more until the CLI turns are done, so that they all run under load. */
const HTTP_TURNS = 40
const HTTP_CONCURRENCY = 5
const CLI_TURNS = 3

interface Answered {
  readonly traceId: string
  readonly costUsd: number
}

const answeredOf = (json: string): Answered => {
  const trace = JSON.parse(json) as { trace_id: string; cost_usd: number; outcome: string }
  assert.strictEqual(trace.outcome, "success", json.slice(0, 300))
  return { traceId: trace.trace_id, costUsd: trace.cost_usd }
}

describe("serve and CLI turns on one workspace", () => {
  // Beside a busy `serve`, each `myclaw chat` turn takes the audit folder's writer lock in turn, is answered and
  // audited, and exits: its close must not wait for its writer fiber for ever.
  it.scoped(
    "every HTTP and CLI turn is audited once, and the budget is the exact sum of their costs",
    () =>
      Effect.gen(function*() {
        const home = yield* workspaceWith(script, config)
        const service = yield* serve(home)

        let cliDone = false
        const httpLoad = Effect.promise(async () => {
          const answers: Array<Answered> = []
          let next = 0
          const worker = async () => {
            while (next < HTTP_TURNS || !cliDone) {
              next++
              const answer = await postTurn(service.address, `http turn ${next} ${"q".repeat(5_000)}`)
              assert.strictEqual(answer.status, 200, answer.body.slice(0, 300))
              answers.push(answeredOf(answer.body))
            }
          }
          await Promise.all(Array.from({ length: HTTP_CONCURRENCY }, worker))
          return answers
        })
        const cliTurns = Effect.forEach(Array.from({ length: CLI_TURNS }, (_, i) => i), (i) =>
          Effect.map(myclaw(["chat", `cli turn ${i}`, "--json"], { MYCLAW_HOME: home }), (run) => {
            assert.strictEqual(run.code, 0, run.stderr)
            return answeredOf(run.stdout)
          })).pipe(Effect.ensuring(Effect.sync(() => {
            cliDone = true
          })))
        const [http, cli] = yield* Effect.all([httpLoad, cliTurns], { concurrency: 2 })

        // A graceful stop: nothing is left in flight, so the budget holds no open reservation.
        service.child.kill("SIGTERM")
        yield* Effect.promise(() =>
          service.exited
        )
        assert.strictEqual(service.child.exitCode, 0, `serve's exit code after SIGTERM; it wrote:\n${service.output()}`)

        const turns = [...http, ...cli]
        assert.isAtLeast(http.length, HTTP_TURNS)
        assert.strictEqual(cli.length, CLI_TURNS)
        const query = yield* myclaw(["audit", "query", "--kind", "trace", "--json", "--limit", "100000"], {
          MYCLAW_HOME: home
        })
        assert.strictEqual(query.code, 0, `audit query: ${query.stderr}${query.stdout.slice(0, 2000)}`)
        const queried = new Map<string, number>()
        for (const line of query.stdout.trim().split("\n")) {
          const record = JSON.parse(line) as { trace_id: string }
          queried.set(record.trace_id, (queried.get(record.trace_id) ?? 0) + 1)
        }
        const audited = auditTraceCounts(home)
        const traces = readTraceFiles(home)
        for (const turn of turns) {
          assert.strictEqual(queried.get(turn.traceId), 1, `audit query: ${turn.traceId}`)
          assert.strictEqual(audited.get(turn.traceId), 1, `audit log: ${turn.traceId}`)
          assert.strictEqual(traces.counts.get(turn.traceId), 1, `trace files: ${turn.traceId}`)
        }
        assert.strictEqual(queried.size, turns.length)
        assert.strictEqual(traces.torn, "")

        const verify = yield* myclaw(["audit", "verify"], { MYCLAW_HOME: home })
        assert.strictEqual(verify.code, 0, verify.stdout + verify.stderr)

        const budget = yield* budgetTotals(home)
        const costs = turns.reduce((sum, turn) => sum + turn.costUsd, 0)
        assert.isAbove(costs, 0)
        assert.approximately(budget.spentEur, costs, 1e-9)
        assert.strictEqual(budget.reservedEur, 0)
      }),
    180_000
  )
})
