import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, ParseResult } from "effect"
import {
  decodeTrace,
  encodeTrace,
  type ExecutionTrace,
  outcomes,
  traceToJson
} from "../../src/domain/ExecutionTrace.js"
import { TestLayer } from "../../src/layers/Test.js"
import { AgentRuntime } from "../../src/services/AgentRuntime.js"

const trace: ExecutionTrace = {
  trace_id: "t-1",
  session_id: "s-1",
  channel: "cli:alice",
  started_at: DateTime.unsafeMake("2025-03-01T10:00:00.000Z"),
  finished_at: DateTime.unsafeMake("2025-03-01T10:00:02.500Z"),
  user_message: "what is in notes?",
  steps: [
    {
      kind: "thought",
      model: "scripted",
      provider: "scripted",
      tier: "frontier",
      prompt_tokens: 120,
      cached_tokens: 100,
      response_tokens: 12,
      finish_reason: "tool_call",
      text: "",
      tool_call: { id: "c1", name: "fs_list", args: { path: "notes" } },
      tool_calls: [{ id: "c1", name: "fs_list", args: { path: "notes" } }, {
        id: "c2",
        name: "fs_read",
        args: null,
        raw_arguments: "{path:"
      }],
      cost_usd: 0.0012,
      wall_ms: 35,
      failed_attempts: [{ provider: "openai:a", reason: "Server", message: "HTTP 500: overloaded" }]
    },
    {
      kind: "action",
      tool_call_id: "c1",
      tool_name: "fs_list",
      args: { path: "notes", nested: [1, "two", { three: true }] },
      validation: "ok",
      validation_error: null,
      policy_decision: "allow",
      policy_reason: "the tool has no side effects",
      approval: { granted: true, via: "cli", reason: "ok" },
      exec_result: { status: "success", content: "a.md (3 bytes)", source: "dir:notes" },
      error: null,
      wall_ms: 4
    },
    { kind: "critic", purpose: "safety", input: "a.md", verdict: "pass", reason: "harmless" }
  ],
  final_response: "notes holds a.md",
  cost_usd: 0.0012,
  wall_time_ms: 2500,
  outcome: "success",
  metadata: { cli_version: "0.1.0", tags: ["x"] }
}

const keys = (value: unknown) => Object.keys(value as object).sort()

describe("ExecutionTrace", () => {
  it.effect("encodes to JSON with exactly the snake_case field names", () =>
    Effect.sync(() => {
      const json = JSON.parse(traceToJson(trace))
      assert.deepStrictEqual(
        keys(json),
        [
          "channel",
          "cost_usd",
          "finished_at",
          "metadata",
          "outcome",
          "session_id",
          "started_at",
          "steps",
          "trace_id",
          "user_message",
          "final_response",
          "wall_time_ms"
        ].sort()
      )
      const [thought, action, critic] = json.steps
      assert.deepStrictEqual(keys(thought), [
        "cached_tokens",
        "cost_usd",
        "failed_attempts",
        "finish_reason",
        "kind",
        "model",
        "prompt_tokens",
        "provider",
        "response_tokens",
        "text",
        "tier",
        "tool_call",
        "tool_calls",
        "wall_ms"
      ])
      assert.deepStrictEqual(keys(action), [
        "approval",
        "args",
        "error",
        "exec_result",
        "kind",
        "policy_decision",
        "policy_reason",
        "tool_call_id",
        "tool_name",
        "validation",
        "validation_error",
        "wall_ms"
      ])
      assert.deepStrictEqual(keys(critic), ["input", "kind", "purpose", "reason", "verdict"])
      assert.deepStrictEqual(keys(action.exec_result), ["content", "source", "status"])
      assert.deepStrictEqual(keys(thought.tool_calls[1]), ["args", "id", "name", "raw_arguments"])
      assert.strictEqual(json.started_at, "2025-03-01T10:00:00.000Z")
      assert.strictEqual(json.finished_at, "2025-03-01T10:00:02.500Z")
    }))

  it.effect("decodes its own JSON back to an equal value", () =>
    Effect.gen(function*() {
      const text = traceToJson(trace)
      const decoded = yield* decodeTrace(JSON.parse(text))
      assert.deepStrictEqual(encodeTrace(decoded), encodeTrace(trace))
      assert.strictEqual(traceToJson(decoded), text)
      assert.isTrue(DateTime.Equivalence(decoded.started_at, trace.started_at))
      assert.deepStrictEqual(decoded.steps[1], trace.steps[1])
      assert.deepStrictEqual(decoded.metadata, trace.metadata)
    }))

  it.effect("keeps an unfinished trace (null finished_at and final_response)", () =>
    Effect.gen(function*() {
      const open: ExecutionTrace = {
        ...trace,
        finished_at: null,
        final_response: null,
        steps: [],
        outcome: "timeout_steps"
      }
      const decoded = yield* decodeTrace(JSON.parse(traceToJson(open)))
      assert.isNull(decoded.finished_at)
      assert.isNull(decoded.final_response)
      assert.strictEqual(decoded.outcome, "timeout_steps")
    }))

  const rejects = (json: unknown) =>
    Effect.flip(decodeTrace(json)).pipe(Effect.map((error) => ParseResult.TreeFormatter.formatErrorSync(error)))

  it.effect("rejects a trace without trace_id, naming the field", () =>
    Effect.gen(function*() {
      const { trace_id: _omit, ...json } = JSON.parse(traceToJson(trace))
      const message = yield* rejects(json)
      assert.include(message, "[\"trace_id\"]")
      assert.include(message, "is missing")
    }))

  it.effect("rejects an unknown outcome, naming the field and the allowed values", () =>
    Effect.gen(function*() {
      const message = yield* rejects({ ...JSON.parse(traceToJson(trace)), outcome: "crashed" })
      assert.include(message, "[\"outcome\"]")
      assert.include(message, "\"crashed\"")
      for (const outcome of outcomes) assert.include(message, `"${outcome}"`)
    }))

  it.effect("rejects a bad step and an unknown field, naming both", () =>
    Effect.gen(function*() {
      const json = JSON.parse(traceToJson(trace))
      json.steps[1].wall_ms = "4"
      json.extra = 1
      const error = yield* Effect.flip(decodeTrace(json))
      const paths = ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => issue.path.join("."))
      assert.include(paths, "steps.1.wall_ms")
      assert.include(paths, "extra")
    }))

  it.effect("rejects a started_at that is not a date", () =>
    Effect.gen(function*() {
      const message = yield* rejects({ ...JSON.parse(traceToJson(trace)), started_at: "yesterday" })
      assert.include(message, "[\"started_at\"]")
    }))
})

describe("traceToJson over the traces real turns make", () => {
  it.scoped("gives the JSON the schema's encoder gives", () =>
    Effect.gen(function*() {
      const runtime = yield* AgentRuntime
      const traces = [
        yield* runtime.handle({ userMessage: "what time is it?", sessionId: "s", channel: "cli:alice" }),
        yield* runtime.handle({ userMessage: "write a note", sessionId: "s", channel: "cli:alice" }),
        yield* runtime.handle({ userMessage: "/status", sessionId: "s", channel: "cli:alice" })
      ]
      assert.isAbove(traces[0]!.steps.length, 3)
      assert.strictEqual(traces[2]!.path, "rule")
      for (const recorded of [trace, ...traces]) {
        assert.deepStrictEqual(JSON.parse(traceToJson(recorded)), JSON.parse(JSON.stringify(encodeTrace(recorded))))
      }
    }).pipe(Effect.provide(TestLayer({
      script: [
        { toolCalls: [{ name: "now", args: {} }, { name: "now", args: { zone: 3 } }] },
        { text: "It is late." },
        { toolCalls: [{ name: "fs_write", args: { path: "note.md", content: "hello" } }] },
        { text: "I could not write it." }
      ]
    }))))
})
