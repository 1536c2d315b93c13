import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { myclaw, workspaceWith } from "../support/Cli.js"

describe("traces missing from the audit log", () => {
  it.scoped(
    "a trace written by a turn that died before its audit record is named in a warning at start",
    () =>
      Effect.gen(function*() {
        const home = yield* workspaceWith([{ text: "first" }, { text: "second" }])
        const first = yield* myclaw(["chat", "hello", "--json"], { MYCLAW_HOME: home })
        assert.strictEqual(first.code, 0, first.stderr)
        const audited = (JSON.parse(first.stdout) as { trace_id: string }).trace_id
        // What a crash between the two writes leaves: a whole trace line with no audit record.
        const dir = NodePath.join(home, ".audit", "traces")
        const file = NodePath.join(dir, NodeFs.readdirSync(dir).find((name) => name.endsWith(".jsonl"))!)
        const line = NodeFs.readFileSync(file, "utf8").trim().split("\n")[0]!
        const orphan = "0b7c2a52-0000-4000-8000-00000000c0de"
        NodeFs.appendFileSync(file, line.replace(audited, orphan) + "\n")

        const second = yield* myclaw(["chat", "again"], { MYCLAW_HOME: home })
        assert.strictEqual(second.code, 0, second.stderr)
        assert.include(second.stderr, "no record in the audit log")
        assert.include(second.stderr, orphan)
        assert.notInclude(second.stderr, audited)
      }),
    60_000
  )
})
