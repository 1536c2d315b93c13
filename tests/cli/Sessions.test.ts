import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { myclaw, workspaceWith } from "../support/Cli.js"

describe("myclaw sessions", () => {
  it.scoped(
    "list, show with the cache share, forget: turns deleted, traces kept, the deletion audited",
    () =>
      Effect.gen(function*() {
        const usage = { input: 1_000, output: 10, cached: 800 }
        const home = yield* workspaceWith([{ text: "Noted: blue.", usage }, { text: "Blue.", usage }])
        const env = { MYCLAW_HOME: home }
        for (const message of ["my colour is blue", "which colour?"]) {
          const turn = yield* myclaw(["chat", message, "--session", "s1"], env)
          assert.strictEqual(turn.code, 0, turn.stderr)
        }
        const listed = yield* myclaw(["sessions", "list"], env)
        assert.strictEqual(listed.code, 0, listed.stderr)
        assert.match(listed.stdout, /^s1 {2}cli:\S* {2}2 turns {2}last active /)

        const shown = yield* myclaw(["sessions", "show", "s1"], env)
        assert.strictEqual(shown.code, 0, shown.stderr)
        assert.include(shown.stdout, "turns        2 stored, 0 summaries")
        assert.include(shown.stdout, "cache share  80.0%")
        assert.include(shown.stdout, "> which colour?")

        const forgotten = yield* myclaw(["sessions", "forget", "s1"], env)
        assert.strictEqual(forgotten.code, 0, forgotten.stderr)
        assert.include(forgotten.stdout, "2 turns")
        const after = yield* myclaw(["sessions", "show", "s1"], env)
        assert.include(after.stdout, "turns        0 stored, 0 summaries")
        const audited = yield* myclaw(["audit", "query", "--kind", "session_forgotten", "--json"], env)
        assert.strictEqual(audited.code, 0, audited.stderr)
        const [record] = audited.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>)
        assert.deepInclude(record, { kind: "session_forgotten", session_id: "s1", turns_deleted: 2 })
        const traces = NodeFs.readdirSync(NodePath.join(home, ".audit", "traces")).filter((f) => f.endsWith(".jsonl"))
        const lines = traces.flatMap((file) =>
          NodeFs.readFileSync(NodePath.join(home, ".audit", "traces", file), "utf8").trim().split("\n")
        )
        assert.strictEqual(lines.length, 2, "the traces stay")

        const missing = yield* myclaw(["sessions", "forget", "nope"], env)
        assert.strictEqual(missing.code, 1)
        assert.include(missing.stderr, "no session \"nope\"")
      }),
    240_000
  )

  it.scoped(
    "forget also drops the cached plans its turns made (their requests and answers); others stay",
    () =>
      Effect.gen(function*() {
        const listing = { toolCalls: [{ name: "fs_list", args: {} }] }
        const home = yield* workspaceWith([listing, { text: "A secret plan." }, listing, { text: "Other." }])
        const env = { MYCLAW_HOME: home }
        assert.strictEqual((yield* myclaw(["chat", "list my private folder", "--session", "s1"], env)).code, 0)
        assert.strictEqual((yield* myclaw(["chat", "list the shared folder", "--session", "s2"], env)).code, 0)
        const before = yield* myclaw(["plans", "list"], env)
        assert.include(before.stdout, "list my private folder")
        assert.include(before.stdout, "list the shared folder")
        const forgotten = yield* myclaw(["sessions", "forget", "s1"], env)
        assert.strictEqual(forgotten.code, 0, forgotten.stderr)
        assert.include(forgotten.stdout, "1 turns and their summaries deleted, and 1 cached plan made from them")
        const after = yield* myclaw(["plans", "list"], env)
        assert.notInclude(after.stdout, "list my private folder")
        assert.include(after.stdout, "list the shared folder")
      }),
    240_000
  )
})
