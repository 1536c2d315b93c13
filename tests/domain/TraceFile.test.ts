import { assert, describe, it } from "@effect/vitest"
import { DateTime, Either } from "effect"
import type { ExecutionTrace } from "../../src/domain/ExecutionTrace.js"
import { jsonSyntaxError } from "../../src/domain/JsonLocation.js"
import { checkReplayable, describeTraceFileError, exportTrace, parseTraceText } from "../../src/domain/TraceFile.js"

const trace: ExecutionTrace = {
  trace_id: "t-1",
  session_id: "s",
  channel: "cli:me",
  started_at: DateTime.unsafeMake("2026-03-01T10:00:00.000Z"),
  finished_at: DateTime.unsafeMake("2026-03-01T10:00:01.000Z"),
  user_message: "hi",
  steps: [{
    kind: "action",
    tool_call_id: "c1",
    tool_name: "now",
    args: {},
    validation: "ok",
    validation_error: null,
    policy_decision: "allow",
    policy_reason: "read-only",
    approval: null,
    exec_result: { status: "success", content: "noon" },
    error: null,
    wall_ms: 1
  }],
  final_response: "hello",
  cost_usd: 0,
  wall_time_ms: 1000,
  outcome: "success",
  metadata: {},
  format: 1,
  replay: { ids: [{ kind: "trace", id: "t-1" }], history: [] }
}

const errorOf = (text: string) => {
  const parsed = parseTraceText(text, "t.json")
  assert.isTrue(Either.isLeft(parsed), "rejected")
  return Either.isLeft(parsed) ? parsed.left : undefined!
}

describe("trace files", () => {
  it("an exported trace reads back as the same trace", () => {
    const parsed = parseTraceText(exportTrace(trace), "t.json")
    assert.deepStrictEqual(parsed, Either.right(trace))
  })

  it("a truncated file is named as cut short, at its end", () => {
    const text = exportTrace(trace)
    const error = errorOf(text.slice(0, 200))
    assert.strictEqual(error.reason, "Truncated")
    const lines = text.slice(0, 200).split("\n")
    assert.strictEqual(error.location, `${lines.length}:${lines.at(-1)!.length + 1}`)
    assert.match(describeTraceFileError(error), /^t\.json:\d+:\d+: the file ends in the middle of the JSON/)
  })

  it("malformed JSON is named with its line and column", () => {
    const text = exportTrace(trace).replace("\"session_id\": \"s\",", "\"session_id\": \"s\",,")
    const error = errorOf(text)
    assert.strictEqual(error.reason, "InvalidJson")
    assert.strictEqual(error.location, "3:21")
    assert.include(error.message, "a property name in double quotes")
  })

  it("a schema-invalid trace names the field", () => {
    const json = JSON.parse(exportTrace(trace)) as { steps: Array<Record<string, unknown>> }
    delete json.steps[0]!.tool_name
    const error = errorOf(JSON.stringify(json))
    assert.strictEqual(error.reason, "Invalid")
    assert.strictEqual(error.location, "steps[0].tool_name")
  })

  it("an optional field with a wrong value is one problem, named for what is wrong with it", () => {
    const json = JSON.parse(exportTrace(trace)) as { replay: { history: Array<Record<string, unknown>> } }
    json.replay.history = [{ user_message: "before", final_response: "yes", answered_at: 42 }]
    const error = errorOf(JSON.stringify(json))
    assert.strictEqual(error.location, "replay.history[0].answered_at")
    assert.strictEqual(error.message, "not a valid trace: Expected string, actual 42")
  })

  it("empty files, non-objects and newer formats are rejected with the reason", () => {
    assert.strictEqual(errorOf("  \n").reason, "Truncated")
    assert.strictEqual(errorOf("[1]").reason, "Invalid")
    const newer = errorOf(JSON.stringify({ ...JSON.parse(exportTrace(trace)), format: 99 }))
    assert.strictEqual(newer.reason, "UnsupportedFormat")
  })

  it("a trace without the replay record is readable but not replayable", () => {
    const { format: _format, replay: _replay, ...old } = trace
    const parsed = parseTraceText(exportTrace(old), "old.json")
    assert.isTrue(Either.isRight(parsed))
    const replayable = Either.flatMap(parsed, (t) => checkReplayable(t, "old.json"))
    assert.isTrue(Either.isLeft(replayable) && replayable.left.reason === "NotReplayable")
  })

  it("the JSON locator agrees with JSON.parse on what is valid", () => {
    const samples = [
      "{}",
      "[1, 2.5e3, -0, true, null, \"\\u00e9\\n\"]",
      "{\"a\": [ ] }",
      "{\"a\":1,}",
      "[01]",
      "\"\t\"",
      "nul",
      "{\"a\" 1}",
      "[1 2]",
      "1 2",
      "\"\\x\""
    ]
    for (const sample of samples) {
      let valid = true
      try {
        JSON.parse(sample)
      } catch {
        valid = false
      }
      assert.strictEqual(jsonSyntaxError(sample) === undefined, valid, sample)
    }
  })
})
