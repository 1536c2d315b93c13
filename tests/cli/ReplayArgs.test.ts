import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { parseEvalArgs, parseReplayArgs } from "../../src/cli/ReplayCommands.js"
import { parseTraceArgs } from "../../src/cli/TraceCommands.js"

const message = (parsed: Either.Either<unknown, { readonly message: string }>) =>
  Either.isLeft(parsed) ? parsed.left.message : "accepted"

describe("the replay, eval and trace command lines", () => {
  it("replay takes a file or --trace ID, and its tool options", () => {
    assert.deepInclude(Either.getOrThrow(parseReplayArgs(["t.json", "--dry-run-tools", "--json"])), {
      source: { _tag: "File", file: "t.json" },
      json: true,
      tools: { sideEffects: "dry-run", readOnly: "recorded" }
    })
    assert.deepInclude(Either.getOrThrow(parseReplayArgs(["--trace=abc", "--live-readonly"])), {
      source: { _tag: "Trace", id: "abc" },
      tools: { sideEffects: "recorded", readOnly: "live" }
    })
    assert.include(message(parseReplayArgs([])), "one trace file or --trace ID")
    assert.include(message(parseReplayArgs(["--trace"])), "needs a trace id")
    assert.include(message(parseReplayArgs(["a.json", "b.json"])), "got a.json b.json")
  })

  it("eval takes one folder; --config only with --live, and --live no tool options", () => {
    assert.deepInclude(Either.getOrThrow(parseEvalArgs(["suite", "--live", "--config", "other.json"])), {
      dir: "suite",
      live: true,
      config: "other.json"
    })
    assert.include(message(parseEvalArgs(["suite", "--config", "x.json"])), "add --live")
    assert.include(message(parseEvalArgs(["suite", "--live", "--dry-run-tools"])), "no tool options")
    assert.include(message(parseEvalArgs(["a", "b"])), "one folder")
  })

  it("trace list takes --session, --since and --limit; show and export one id", () => {
    assert.deepInclude(Either.getOrThrow(parseTraceArgs(["list", "--session", "s1", "--since", "2026-04-01"])), {
      session: "s1",
      since: Date.parse("2026-04-01T00:00:00.000Z"),
      limit: 50
    })
    assert.include(message(parseTraceArgs(["list", "--since", "yesterday"])), "--since")
    assert.include(message(parseTraceArgs(["show"])), "one trace id")
    assert.include(message(parseTraceArgs(["export", "x", "--json"])), "always writes JSON")
    assert.include(message(parseTraceArgs(["remove", "x"])), "expected list, show or export")
  })
})
