import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { myclaw, workspaceWith } from "../support/Cli.js"

const script = [
  { toolCalls: [{ name: "fs_list", args: { path: "." } }] },
  { text: "The workspace holds your notes." },
  { toolCalls: [{ name: "now", args: {} }] },
  { text: "It is now." }
]

describe("myclaw replay and eval", () => {
  it.scoped(
    "recorded turns replay identically; a changed one is reported alone, a malformed one with its location",
    () =>
      Effect.gen(function*() {
        const home = yield* workspaceWith(script)
        const env = { MYCLAW_HOME: home, MYCLAW_LOG_LEVEL: "none" }
        const suite = NodePath.join(home, "suite")
        NodeFs.mkdirSync(suite)
        const first = yield* myclaw(["chat", "what is here?", "--json"], env)
        assert.strictEqual(first.code, 0, first.stderr)
        const second = yield* myclaw(["chat", "what time is it?", "--json"], env)
        assert.strictEqual(second.code, 0, second.stderr)
        NodeFs.writeFileSync(NodePath.join(suite, "a-list.json"), first.stdout)
        NodeFs.writeFileSync(NodePath.join(suite, "b-now.json"), second.stdout)

        const byId = yield* myclaw(
          ["replay", "--trace", (JSON.parse(first.stdout) as { trace_id: string }).trace_id],
          env
        )
        assert.strictEqual(byId.code, 0, byId.stdout + byId.stderr)
        assert.match(byId.stdout, /^IDENTICAL/)
        assert.include(byId.stdout, "1 served from the recording")

        const clean = yield* myclaw(["eval", suite], env)
        assert.strictEqual(clean.code, 0, clean.stdout + clean.stderr)
        assert.include(clean.stdout, "2 traces: 2 identical, 0 diverged, 0 invalid")

        const changed = JSON.parse(second.stdout) as { steps: Array<{ exec_result?: { content: string } }> }
        changed.steps[1]!.exec_result!.content = "a different time"
        NodeFs.writeFileSync(NodePath.join(suite, "b-now.json"), JSON.stringify(changed))
        const diverged = yield* myclaw(["eval", suite, "--json"], env)
        assert.strictEqual(diverged.code, 1)
        const result = JSON.parse(diverged.stdout) as {
          rows: Array<{ file: string; report: { identical: boolean; divergence: { step: number; kind: string } } }>
          totals: { identical: number; diverged: number }
        }
        assert.deepStrictEqual(result.totals.diverged, 1)
        const bad = result.rows.filter((row) => !row.report.identical)
        assert.deepStrictEqual(bad.map((row) => NodePath.basename(row.file)), ["b-now.json"])
        assert.deepInclude(bad[0]!.report.divergence, { step: 3, kind: "request" })

        const broken = NodePath.join(suite, "c-broken.json")
        NodeFs.writeFileSync(broken, first.stdout.slice(0, 120))
        const malformed = yield* myclaw(["replay", broken], env)
        assert.strictEqual(malformed.code, 2)
        assert.match(malformed.stderr, /c-broken\.json:1:121: the file ends in the middle of the JSON/)
        const table = yield* myclaw(["eval", suite], env)
        assert.strictEqual(table.code, 1)
        assert.match(table.stdout, /c-broken\.json +- +- +INVALID/)
        assert.include(table.stdout, "3 traces: 1 identical, 1 diverged, 1 invalid")
      }),
    180_000
  )
})
