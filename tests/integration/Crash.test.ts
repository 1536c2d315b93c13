import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { myclaw, workspaceWith } from "../support/Cli.js"
import {
  type Answer,
  auditTraceCounts,
  budgetTotals,
  postTurn,
  readTraceFiles as readAllTraceFiles,
  serve,
  sessionTraceCounts,
  traceFilesReader
} from "../support/Serve.js"

/**
 * Kill-and-restart cycles: 20 by default (2.5-6.5 s a cycle on a loaded 2-core machine, less on a quiet one);
 * MYCLAW_CRASH_CYCLES asks for more (CI runs 50, `npm run crash-test` 300 unless it is set).
 */
const CYCLES = Number(process.env.MYCLAW_CRASH_CYCLES ?? "20")
/** Turns kept in flight at once. */
const CONCURRENCY = 6
/** Each message is near the 100,000-character limit, so each trace (request recorded too) is ~200 KB. */
const MESSAGE = "m".repeat(90_000)
/** 10 output tokens at 1000 USD per million: every call costs 0.01 USD (= EUR here) and reserves ~41 EUR. */
const config = {
  pricing: { "crash-model": { inputPerMTok: 0, cachedInputPerMTok: 0, outputPerMTok: 1000 } },
  usdToEur: 1,
  budget: { softCapEur: 1_000_000, hardCapEur: 1_000_000, timeZone: "UTC" },
  traces: { recordRequests: true }
}
// Answers a few KB long, some after a short wait so that reservations are open when the process dies.
const script = Array.from({ length: 300 }, (_, i) => ({
  text: `answer ${i} ${"a".repeat(4_000)}`,
  usage: { input: 100, output: 10 },
  delayMs: (i % 4) * 15
}))

interface Turn {
  readonly traceId: string
  readonly costUsd: number
}

/**
 * Keeps CONCURRENCY turns in flight and SIGKILLs the service once `killAfter` of them were answered (0: as soon
 * as the first requests are sent). Returns the answers that arrived whole.
 */
const loadThenKill = (address: string, child: { kill: (signal: NodeJS.Signals) => boolean }, killAfter: number) =>
  Effect.promise(() =>
    new Promise<ReadonlyArray<Answer>>((resolve) => {
      const answers: Array<Answer> = []
      let answered = 0
      let killed = false
      let open = 0
      const kill = () => {
        if (killed) return
        killed = true
        child.kill("SIGKILL")
      }
      const launch = () => {
        open++
        void postTurn(address, MESSAGE).then((answer) => {
          open--
          answers.push(answer)
          if (answer.status === 200) answered++
          if (answered >= killAfter) kill()
          if (!killed) launch()
          if (open === 0) resolve(answers)
        })
      }
      for (let i = 0; i < CONCURRENCY; i++) launch()
      if (killAfter === 0) setImmediate(kill)
    })
  )

describe("crash recovery", () => {
  it.scoped(
    `${CYCLES} SIGKILLs under load: the audit log verifies, no trace or session turn is lost or glued, no spend is forgotten`,
    () =>
      Effect.gen(function*() {
        const home = yield* workspaceWith(script, {
          tiers: { frontier: [{ provider: "scripted", script: "script.json", model: "crash-model" }] },
          ...config
        })
        const turns: Array<Turn> = []
        let unanswered = 0
        let service = yield* serve(home)
        const readTraceFiles = traceFilesReader(home)
        for (let cycle = 0; cycle < CYCLES; cycle++) {
          // Varied moments: before any answer, after a few, while larger batches are being written.
          const killAfter = (cycle * 5) % 11
          const answers = yield* loadThenKill(service.address, service.child, killAfter)
          yield* Effect.promise(() => service.exited)
          for (const answer of answers) {
            if (answer.status === 0) {
              unanswered++
              continue
            }
            assert.strictEqual(answer.status, 200, `cycle ${cycle}: ${answer.body.slice(0, 500)}`)
            const trace = JSON.parse(answer.body) as { trace_id: string; cost_usd: number }
            turns.push({ traceId: trace.trace_id, costUsd: trace.cost_usd })
          }

          // Every line of the trace files is one whole trace: a torn tail left by an earlier kill was moved
          // aside by the restart, not glued to the next trace.
          const traces = readTraceFiles()
          const audited = auditTraceCounts(home)
          for (const [id, count] of traces.counts) assert.strictEqual(count, 1, `cycle ${cycle}: trace ${id} twice`)
          for (const turn of turns) {
            assert.strictEqual(traces.counts.get(turn.traceId), 1, `cycle ${cycle}: answered trace ${turn.traceId}`)
            assert.strictEqual(audited.get(turn.traceId), 1, `cycle ${cycle}: audit record of ${turn.traceId}`)
            assert.notInclude(traces.torn, turn.traceId, `cycle ${cycle}: answered trace in a torn fragment`)
          }

          const budget = yield* budgetTotals(home)
          const answeredEur = turns.reduce((sum, turn) => sum + turn.costUsd, 0)
          assert.isAtLeast(
            budget.spentEur + 1e-9,
            answeredEur,
            `cycle ${cycle}: ${budget.spentEur} EUR spent for ${turns.length} answered turns`
          )

          // The log verifies as the crash left it; the service restarts meanwhile (verify only reads).
          const [verify, next] = yield* Effect.all([myclaw(["audit", "verify"], { MYCLAW_HOME: home }), serve(home)], {
            concurrency: 2
          })
          assert.strictEqual(verify.code, 0, `cycle ${cycle}: audit verify\n${verify.stdout}${verify.stderr}`)
          service = next
        }
        // What was read cycle by cycle is what the files hold when read whole.
        assert.deepStrictEqual(readTraceFiles().counts, readAllTraceFiles(home).counts)
        // Session records a kill cut off were added back from the traces at each start; stopped cleanly, the last
        // service writes those still waiting. Every answered turn is in its session, and no turn is there twice.
        service.child.kill("SIGTERM")
        yield* Effect.promise(() => service.exited)
        const recorded = yield* sessionTraceCounts(home)
        for (const turn of turns) assert.strictEqual(recorded.get(turn.traceId), 1, `session turn of ${turn.traceId}`)
        for (const [id, count] of recorded) assert.strictEqual(count, 1, `trace ${id} in its session ${count} times`)
        // The load really ran: turns were answered and turns were cut by the kills.
        assert.isAbove(turns.length, CYCLES)
        assert.isAbove(unanswered, 0)
        assert.isAbove(turns.reduce((sum, turn) => sum + turn.costUsd, 0), 0)
      }),
    Math.max(120_000, CYCLES * 12_000)
  )
})
