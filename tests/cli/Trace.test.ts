import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { parseTraceText } from "../../src/domain/TraceFile.js"
import { myclaw, workspaceWith } from "../support/Cli.js"

const script = [
  { toolCalls: [{ name: "fs_list", args: { path: "." } }] },
  { text: "The workspace holds your notes." },
  { text: "Second answer." }
]

describe("myclaw trace", () => {
  it.scoped("list, show and export the recorded turns", () =>
    Effect.gen(function*() {
      const home = yield* workspaceWith(script)
      const env = { MYCLAW_HOME: home, MYCLAW_LOG_LEVEL: "none" }
      const first = yield* myclaw(["chat", "what is here?", "--session", "one", "--json"], env)
      assert.strictEqual(first.code, 0, first.stderr)
      const id = (JSON.parse(first.stdout) as { trace_id: string }).trace_id
      assert.strictEqual((yield* myclaw(["chat", "again", "--session", "two"], env)).code, 0)

      const list = yield* myclaw(["trace", "list"], env)
      assert.strictEqual(list.code, 0, list.stderr)
      assert.strictEqual(list.stdout.trim().split("\n").length, 2)
      assert.include(list.stdout, id)
      const one = yield* myclaw(["trace", "list", "--session", "one", "--json"], env)
      const listed = JSON.parse(one.stdout) as Array<{ trace_id: string; steps: number }>
      assert.deepStrictEqual(listed.map((entry) => [entry.trace_id, entry.steps]), [[id, 3]])
      const future = yield* myclaw(["trace", "list", "--since", "2999-01-01"], env)
      assert.strictEqual(future.stdout.trim(), "no traces")

      const show = yield* myclaw(["trace", "show", id], env)
      assert.strictEqual(show.code, 0, show.stderr)
      assert.match(show.stdout, /1\. Thought/)
      assert.match(show.stdout, /2\. Action {3}fs_list\(\{"path":"\."\}\)/)
      assert.include(show.stdout, "policy: allow")
      assert.include(show.stdout, "result: success")
      assert.include(show.stdout, "answer: The workspace holds your notes.")

      const exported = yield* myclaw(["trace", "export", id], env)
      assert.strictEqual(exported.code, 0, exported.stderr)
      const parsed = parseTraceText(exported.stdout, "trace.json")
      assert.strictEqual(parsed._tag, "Right")
      if (parsed._tag === "Right") assert.strictEqual(parsed.right.trace_id, id)

      const missing = yield* myclaw(["trace", "show", "nope"], env)
      assert.strictEqual(missing.code, 1)
      assert.include(missing.stderr, "no trace \"nope\"")
      const bad = yield* myclaw(["trace", "list", "--limit", "0"], env)
      assert.strictEqual(bad.code, 2)
    }), 120_000)
})
