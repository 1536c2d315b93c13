import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Queue, TestClock } from "effect"
import { digestCommand } from "../../src/cli/Digest.js"
import type { AuditRecord, AuditRecordOf } from "../../src/domain/AuditRecord.js"
import type { Outcome } from "../../src/domain/ExecutionTrace.js"
import type { ScriptEntry } from "../../src/domain/ScriptEntry.js"
import { localDayBounds as dayBounds } from "../../src/domain/Time.js"
import { LlmFunction } from "../../src/layers/llm/LlmScripted.js"
import { TestLayer } from "../../src/layers/Test.js"
import { dailyDigest, type Digest, DigestSchedule } from "../../src/programs/Digest.js"
import { keepsNumbers } from "../../src/programs/digest/DigestText.js"
import { AuditLog } from "../../src/services/AuditLog.js"

const trace = (
  at: string,
  outcome: Outcome,
  wallMs: number,
  costUsd: number,
  tools: ReadonlyArray<readonly [string, string]> = []
): AuditRecordOf<"trace"> => ({
  kind: "trace",
  at,
  trace_id: `t-${at}`,
  session_id: "s",
  channel: "telegram",
  sender: "telegram:@owner",
  started_at: at,
  finished_at: at,
  user_message: "m",
  final_response: null,
  steps_count: tools.length + 1,
  tool_calls: tools.map(([name, outcome]) => ({ name, args_summary: "", outcome })),
  cost_usd: costUsd,
  wall_time_ms: wallMs,
  outcome,
  approvals_requested: 0,
  approvals_granted: 0
})

const approval = (
  at: string,
  event: AuditRecordOf<"approval">["event"],
  effectClass: string,
  granted: boolean | null,
  via: AuditRecordOf<"approval">["via"]
): AuditRecordOf<"approval"> => ({
  kind: "approval",
  at,
  event,
  request_id: `ar-${at}`,
  trace_id: "t",
  session_id: "s",
  sender: "telegram:@owner",
  tool_name: effectClass.split(":")[0]!,
  effect_class: effectClass,
  args_hash: "h",
  granted,
  via
})

const times = (n: number, name: string, outcome = "success") =>
  Array.from({ length: n }, () => [name, outcome] as const)

/** 2026-04-22 in Europe/Rome (UTC+2): from 2026-04-21T22:00Z to 2026-04-22T21:59:59.999Z. */
const day: ReadonlyArray<AuditRecord> = [
  trace("2026-04-21T21:59:59.000Z", "success", 99_000, 5),
  trace("2026-04-21T22:00:00.000Z", "success", 1000, 0.1, times(3, "fs_read")),
  trace("2026-04-22T08:00:00.000Z", "success", 2000, 0.2, [...times(2, "fs_read"), ...times(4, "web_fetch")]),
  approval("2026-04-22T08:29:00.000Z", "requested", "fs_write:notes/a.md", null, "pending"),
  approval("2026-04-22T08:30:00.000Z", "verdict", "fs_write:notes/a.md", true, "explicit"),
  approval("2026-04-22T08:31:00.000Z", "verdict", "fs_write:notes/b.md", true, "explicit"),
  approval("2026-04-22T08:35:00.000Z", "batch_use", "fs_write:notes/b.md", true, "batch"),
  approval("2026-04-22T08:36:00.000Z", "batch_use", "fs_write:notes/c.md", true, "session"),
  approval("2026-04-22T08:37:00.000Z", "answer_rejected", "fs_write:notes/c.md", null, "explicit"),
  trace("2026-04-22T09:00:30.000Z", "user_aborted", 3000, 0.05, times(1, "fs_write", "not_approved")),
  approval("2026-04-22T09:00:00.000Z", "verdict", "fs_write:notes/no.md", false, "explicit"),
  approval("2026-04-22T09:10:00.000Z", "verdict", "shell_run:rm", false, "timeout"),
  trace("2026-04-22T10:00:00.000Z", "tool_hallucination", 500, 0.05, [
    ...times(4, "rm_rf", "unknown_tool"),
    ["fs_read", "schema_error"]
  ]),
  {
    kind: "tool_decision",
    at: "2026-04-22T12:00:00.000Z",
    trace_id: "t",
    session_id: "s",
    sender: "telegram:@owner",
    tool_name: "fs_write",
    target: "SOUL.md",
    args_hash: "h",
    decision: "deny",
    rule: "builtin:constitution",
    approval_request_id: null
  },
  trace("2026-04-22T12:00:01.000Z", "policy_denied", 700, 0, times(1, "fs_write", "denied")),
  {
    kind: "injection_suspected",
    at: "2026-04-22T12:03:00.000Z",
    trace_id: "t",
    session_id: "s",
    sender: "telegram:@owner",
    source: "web:example.org",
    pattern: "ignore previous instructions",
    excerpt: "IGNORE PREVIOUS INSTRUCTIONS"
  },
  {
    kind: "workspace_edit",
    at: "2026-04-22T17:47:00.000Z",
    file: "MEMORY.md",
    author: "agent",
    trace_id: "t",
    size_before: 10,
    size_after: 20,
    diff_stat: "+3 -0",
    approved_by_request_id: null
  },
  trace("2026-04-22T21:59:59.999Z", "success", 6200, 0.6),
  trace("2026-04-22T22:00:00.000Z", "budget_hit", 1, 9)
]

const expected = `myclaw · digest · 2026-04-22

📨 Requests handled: 6
  ├─ 3 completed successfully
  ├─ 1 aborted (an approval denied or timed out, or stopped)
  ├─ 1 denied by the policy
  └─ 1 failed (tool hallucination: the model invented a tool or its arguments)

🔧 Tools used more than 3 times:
  - fs_read (6)
  - web_fetch (4)

✅ Approvals:
  - 2 granted explicitly
  - 2 granted by a standing grant (fs_write:notes/b.md, fs_write:notes/c.md)
  - 2 denied or timed out (fs_write:notes/no.md, shell_run:rm)

💰 Cost: 0.92 € (soft cap 2.00 €)
⏱ Latency p95: 6.2 s

⚠ Notable:
  - 11:00 approval denied for fs_write:notes/no.md
  - 11:10 approval timed out for shell_run:rm
  - 14:00 the policy denied fs_write on SOUL.md (builtin:constitution)
  - 14:03 suspected prompt injection from web:example.org (pattern "ignore previous instructions"): not executed
  - 19:47 MEMORY.md edited by agent (+3 -0)

🟢 state: regular`

const graph = (script: ReadonlyArray<ScriptEntry> = [], dailyAt: string | null = "22:00") =>
  TestLayer({ script, config: { budget: { timeZone: "Europe/Rome" }, usdToEur: 0.92, digest: { dailyAt } } })

const recorded = (records: ReadonlyArray<AuditRecord>) =>
  Effect.flatMap(AuditLog, (audit) => Effect.forEach(records, (record) => audit.append(record), { discard: true }))

describe("Digest", () => {
  it.scoped("a hand-built audit day, exactly; records a millisecond outside the local day are left out", () =>
    Effect.gen(function*() {
      yield* recorded(day)
      const digest = yield* dailyDigest({ day: "2026-04-22", polish: false })
      assert.strictEqual(digest.text, expected)
      assert.isFalse(digest.polished)
      assert.strictEqual(digest.facts.requests, 6)
      assert.strictEqual(digest.facts.p95Ms, 6200)
      assert.closeTo(digest.facts.costEur, 0.92, 1e-12)
    }).pipe(Effect.provide(graph())))

  it.scoped("an empty day, `today` in the configured zone, and the state words", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-04-23T21:30:00.000Z"))
      const empty = yield* dailyDigest({ day: "today", polish: false })
      assert.strictEqual(empty.day, "2026-04-23")
      assert.strictEqual(
        empty.text,
        "myclaw · digest · 2026-04-23\n\n📨 Requests handled: 0\n\n🔧 No tool used more than 3 times.\n\n" +
          "✅ No approvals.\n\n" +
          "💰 Cost: 0.00 € (soft cap 2.00 €)\n⏱ Latency p95: no requests\n\n⚠ Nothing notable.\n\n" +
          "No constitution or workspace edits.\n🟢 state: regular"
      )
      yield* recorded([{
        kind: "budget_override",
        at: "2026-04-23T10:00:00.000Z",
        sender: "cli:owner",
        until: "2026-04-23T21:00:00.000Z",
        reason: "a long report"
      }])
      const override = yield* dailyDigest({ day: "today", polish: false })
      assert.include(override.text, "  - 12:00 budget override by cli:owner until 23:00: a long report")
      assert.include(override.text, "🟡 state: attention")
      yield* recorded([{
        kind: "constitution_modified",
        at: "2026-04-23T20:00:00.000Z",
        hash_before: "sha256:a",
        hash_after: "sha256:b",
        diff: "+1",
        notes: "rule 5"
      }])
      const alert = yield* dailyDigest({ day: "today", polish: false })
      assert.include(alert.text, "  - 22:00 constitution (SOUL.md) modified: rule 5")
      assert.notInclude(alert.text, "No constitution or workspace edits.")
      assert.include(alert.text, "🔴 state: alert")
    }).pipe(Effect.provide(graph())))

  it("day bounds follow the zone, DST included", () => {
    assert.deepStrictEqual(dayBounds("2026-04-22", "Europe/Rome"), {
      since: Date.parse("2026-04-21T22:00:00.000Z"),
      until: Date.parse("2026-04-22T21:59:59.999Z")
    })
    const shortDay = dayBounds("2026-03-29", "Europe/Rome")
    assert.strictEqual(shortDay.until + 1 - shortDay.since, 23 * 3600_000)
    const newYear = dayBounds("2026-12-31", "UTC")
    assert.strictEqual(newYear.until + 1, Date.parse("2027-01-01T00:00:00.000Z"))
  })

  it("a polish keeps the numbers: all of them, as often, and no new one", () => {
    assert.isTrue(keepsNumbers("3 done, 1 failed at 14:03", "At 14:03: 3 requests done and 1 failed."))
    assert.isFalse(keepsNumbers("3 done, 1 failed", "3 done, 2 failed"))
    assert.isFalse(keepsNumbers("3 done, 3 failed", "3 done, several failed"))
    assert.isFalse(keepsNumbers("cost 0.92", "cost 0.9"))
    assert.isFalse(keepsNumbers("3 done", "3 done in 5 minutes"))
  })

  it.scoped("the LLM polish is used when it keeps every number", () => {
    const polished = expected.replace("📨 Requests handled: 6", "📨 Today I handled 6 requests")
    return Effect.gen(function*() {
      yield* recorded(day)
      const digest = yield* dailyDigest({ day: "2026-04-22", polish: true })
      assert.isTrue(digest.polished)
      assert.strictEqual(digest.text, polished)
      assert.strictEqual(digest.plain, expected)
    }).pipe(Effect.provide(graph([{ text: polished }])))
  })

  it.scoped("a polish that changes a number is thrown away: the plain text comes out", () =>
    Effect.gen(function*() {
      yield* recorded(day)
      const digest = yield* dailyDigest({ day: "2026-04-22", polish: true })
      assert.isFalse(digest.polished)
      assert.strictEqual(digest.text, expected)
    }).pipe(Effect.provide(graph([{ text: expected.replace("fs_read (6)", "fs_read (7)") }]))))

  it.scoped("a day without requests is not polished: no model is called", () => {
    let calls = 0
    return Effect.gen(function*() {
      const digest = yield* dailyDigest({ day: "2026-04-22", polish: true })
      assert.isFalse(digest.polished)
      assert.strictEqual(calls, 0)
    }).pipe(Effect.provide(TestLayer({
      llm: LlmFunction(() => {
        calls++
        return { text: "a rephrased empty day" }
      }),
      config: { budget: { timeZone: "Europe/Rome" } }
    })))
  })

  it.scoped("the paid polish call is an llm_call audit record, with its cost", () => {
    const polished = expected.replace("📨 Requests handled: 6", "📨 Today I handled 6 requests")
    return Effect.gen(function*() {
      yield* recorded(day)
      yield* dailyDigest({ day: "2026-04-22", polish: true })
      const [record] = yield* (yield* AuditLog).query({ kind: "llm_call", limit: 10 })
      assert.deepInclude(record, { kind: "llm_call", purpose: "digest_polish", input_tokens: 1000, output_tokens: 10 })
      assert.closeTo((record as { cost_usd: number }).cost_usd, 0.002, 1e-9)
    }).pipe(Effect.provide(TestLayer({
      script: [{ text: polished, usage: { input: 1000, output: 10 } }],
      config: {
        budget: { timeZone: "Europe/Rome" },
        usdToEur: 0.92,
        pricing: { scripted: { inputPerMTok: 1, cachedInputPerMTok: 0, outputPerMTok: 100 } }
      }
    })))
  })

  it.scoped("no LLM reachable: the plain digest still comes out", () =>
    Effect.gen(function*() {
      yield* recorded(day)
      const digest = yield* dailyDigest({ day: "2026-04-22", polish: true })
      assert.isFalse(digest.polished)
      assert.strictEqual(digest.text, expected)
    }).pipe(Effect.provide(graph([{ error: { reason: "Auth", message: "no key" } }]))))

  it.scoped("the schedule sends the day's digest at digest.dailyAt local time, every day", () =>
    Effect.gen(function*() {
      // The clock is set before the layer that forks the schedule is built: or the test hangs.
      yield* TestClock.setTime(Date.parse("2026-04-22T19:59:00.000Z"))
      const sent = yield* Queue.unbounded<Digest>()
      yield* Layer.build(DigestSchedule((digest) => Queue.offer(sent, digest)))
      yield* recorded(day)
      yield* TestClock.adjust("59 seconds")
      assert.isTrue((yield* Queue.size(sent)) === 0, "nothing before 22:00")
      yield* TestClock.adjust("1 second")
      const first = yield* Queue.take(sent)
      assert.strictEqual(first.day, "2026-04-22")
      assert.strictEqual(first.plain, expected)
      yield* TestClock.adjust("1 day")
      const second = yield* Queue.take(sent)
      assert.strictEqual(second.day, "2026-04-23")
      assert.include(second.plain, "📨 Requests handled: 1")
    }).pipe(Effect.provide(graph([{ error: { reason: "Auth" } }, { error: { reason: "Auth" } }]))))

  it.scoped("digest.dailyAt null: no schedule", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-04-22T19:59:00.000Z"))
      const sent = yield* Queue.unbounded<Digest>()
      yield* Layer.build(DigestSchedule((digest) => Queue.offer(sent, digest)))
      yield* TestClock.adjust("2 days")
      assert.strictEqual(yield* Queue.size(sent), 0)
    }).pipe(Effect.provide(graph([], null))))

  it.scoped("myclaw digest: an invalid day is a usage error naming it", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-04-22T12:00:00.000Z"))
      for (const text of ["yesterday", "2026-02-30", "2026-4-1", "2026-04-23", "9999-12-31"]) {
        const exit = yield* Effect.exit(digestCommand({ day: text }))
        assert.isTrue(Exit.isFailure(exit))
        assert.include(JSON.stringify(exit), text)
      }
    }).pipe(Effect.provide(graph())))
})
