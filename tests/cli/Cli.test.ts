import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { decodeTrace, type Outcome } from "../../src/domain/ExecutionTrace.js"
import { main, myclaw, workspaceWith } from "../support/Cli.js"

const scripts: ReadonlyArray<readonly [Outcome, unknown, Record<string, unknown>?]> = [
  ["success", [{ toolCalls: [{ name: "fs_list", args: {} }] }, { text: "Four files." }]],
  ["tool_hallucination", [{ toolCalls: [{ name: "rm_rf", args: {} }] }, {
    toolCalls: [{ name: "fs_read", args: {} }]
  }]],
  ["policy_denied", [{ toolCalls: [{ name: "fs_write", args: { path: "SOUL.md", content: "x" } }] }]],
  ["user_aborted", [{ toolCalls: [{ name: "fs_write", args: { path: "notes.md", content: "x" } }] }]],
  ["timeout_steps", [{ toolCalls: [{ name: "now", args: {} }] }, { toolCalls: [{ name: "now", args: {} }] }], {
    maxSteps: 2
  }]
]

describe("myclaw chat", () => {
  for (const [outcome, script, config] of scripts) {
    it.scoped(`--json prints one decodable trace ending in ${outcome}, exit 0`, () =>
      Effect.gen(function*() {
        const home = yield* workspaceWith(script, config)
        const run = yield* myclaw(["chat", "please", "--json", "--session", "s-cli"], { MYCLAW_HOME: home })
        assert.strictEqual(run.code, 0, run.stderr)
        const lines = run.stdout.trim().split("\n")
        assert.strictEqual(lines.length, 1)
        const trace = yield* decodeTrace(JSON.parse(lines[0]!))
        assert.strictEqual(trace.outcome, outcome)
        assert.strictEqual(trace.session_id, "s-cli")
        const stored = NodeFs.readdirSync(NodePath.join(home, ".audit", "traces")).filter((n) => n.endsWith(".jsonl"))
        assert.strictEqual(stored.length, 1)
        const persisted = NodeFs.readFileSync(NodePath.join(home, ".audit", "traces", stored[0]!), "utf8")
        assert.strictEqual(persisted, lines[0] + "\n")
      }))
  }

  it.scoped("without --json prints the answer alone on stdout, the outcome on stderr", () =>
    Effect.gen(function*() {
      const home = yield* workspaceWith([{ text: "Noted: blue." }])
      const run = yield* myclaw(["chat", "my colour is blue", "--session", "s1"], { MYCLAW_HOME: home })
      assert.strictEqual(run.stdout, "Noted: blue.\n")
      assert.include(run.stderr, "success")
      assert.include(run.stderr, "session s1")
    }))

  it.scoped("a turn that cannot be audited (the key folder is gone) is refused, nothing is paid, exit 1", () =>
    Effect.gen(function*() {
      const home = yield* workspaceWith([{ text: "First." }, { text: "Second." }])
      const env = { MYCLAW_HOME: home, MYCLAW_KEY_DIR: NodePath.join(home, "..", "keys") }
      const first = yield* myclaw(["chat", "one", "--session", "s1"], env)
      assert.strictEqual(first.code, 0, first.stderr)
      NodeFs.rmSync(env.MYCLAW_KEY_DIR, { recursive: true })
      const second = yield* myclaw(["chat", "two", "--session", "s1", "--json"], env)
      assert.strictEqual(second.code, 1)
      const trace = yield* decodeTrace(JSON.parse(second.stdout.trim()))
      assert.strictEqual(trace.outcome, "policy_denied")
      assert.deepStrictEqual(trace.steps, [])
      assert.include(trace.final_response!, "Not done: the audit log cannot be written")
      assert.include(second.stderr, "the audit key is missing")
    }))

  it.scoped("read-only commands on a mistyped MYCLAW_HOME create nothing and exit 1, naming the folder", () =>
    Effect.gen(function*() {
      const parent = yield* workspaceWith([])
      const typo = NodePath.join(parent, "wrokspace")
      for (const args of [["audit", "verify"], ["audit", "query"], ["digest", "--no-polish"], ["budget"]]) {
        const run = yield* myclaw(args, { MYCLAW_HOME: typo })
        assert.strictEqual(run.code, 1, `${args.join(" ")}: ${run.stdout}`)
        assert.include(run.stderr, typo)
        assert.include(run.stderr, "no workspace here (check MYCLAW_HOME)")
        assert.isFalse(NodeFs.existsSync(typo), `${args.join(" ")} created ${typo}`)
      }
      // A workspace without an audit log yet: the same, and still nothing written.
      const bare = NodePath.join(parent, "bare")
      NodeFs.mkdirSync(bare)
      const run = yield* myclaw(["audit", "verify"], { MYCLAW_HOME: bare })
      assert.strictEqual(run.code, 1)
      assert.include(run.stderr, "no audit log here")
      assert.deepStrictEqual(NodeFs.readdirSync(bare), [])
    }))

  it.scoped("a workspace restored without its keys is resumed from the seed: verified, key re-derived, recorded", () =>
    Effect.gen(function*() {
      const home = yield* workspaceWith([{ text: "Before." }, { text: "After." }])
      const keys = NodePath.join(home, "..", `${NodePath.basename(home)}-keys`)
      const env = { MYCLAW_HOME: home, MYCLAW_KEY_DIR: keys }
      assert.strictEqual((yield* myclaw(["chat", "one"], env)).code, 0)
      const seed = NodePath.join(home, "..", `${NodePath.basename(home)}-seed.json`)
      NodeFs.copyFileSync(NodePath.join(keys, "audit-seed.json"), seed)
      const other = yield* workspaceWith([{ text: "Elsewhere." }])
      const otherKeys = NodePath.join(other, "..", `${NodePath.basename(other)}-keys`)
      assert.strictEqual((yield* myclaw(["chat", "x"], { MYCLAW_HOME: other, MYCLAW_KEY_DIR: otherKeys })).code, 0)

      const present = yield* myclaw(["audit", "resume", "--seed", seed], env)
      assert.strictEqual(present.code, 1)
      assert.include(present.stderr, "there is nothing to resume")

      NodeFs.rmSync(keys, { recursive: true })
      const refused = yield* myclaw(["chat", "two"], env)
      assert.strictEqual(refused.code, 1, "no key: the turn is refused")
      const wrong = yield* myclaw(["audit", "resume", "--seed", NodePath.join(otherKeys, "audit-seed.json")], env)
      assert.strictEqual(wrong.code, 1)
      assert.include(wrong.stderr, "does not verify against this seed")
      assert.isFalse(NodeFs.existsSync(NodePath.join(keys, "audit-key.json")), "a wrong seed installs nothing")

      const resumed = yield* myclaw(["audit", "resume", "--seed", seed], env)
      assert.strictEqual(resumed.code, 0, resumed.stderr)
      assert.include(resumed.stdout, "audit log resumed")
      const after = yield* myclaw(["chat", "three"], env)
      assert.strictEqual(after.code, 0, after.stderr)
      const verify = yield* myclaw(["audit", "verify", "--seed", seed], env)
      assert.strictEqual(verify.code, 0, verify.stdout + verify.stderr)
      const query = yield* myclaw(["audit", "query", "--kind", "audit_resumed", "--json"], env)
      assert.strictEqual(query.code, 0, query.stderr)
      assert.include(query.stdout, "\"kind\":\"audit_resumed\"")
    }))

  it.scoped("a corrupt approvals database stops chat with a message naming the file, no stack", () =>
    Effect.gen(function*() {
      const home = yield* workspaceWith([{ text: "Hi." }])
      const database = NodePath.join(home, ".state", "approvals.sqlite")
      NodeFs.mkdirSync(NodePath.dirname(database), { recursive: true })
      NodeFs.writeFileSync(database, "not a database ".repeat(500))
      const run = yield* myclaw(["chat", "hi"], { MYCLAW_HOME: home })
      assert.strictEqual(run.code, 1)
      assert.include(run.stderr, database)
      assert.include(run.stderr, "the approvals database cannot be read (file is not a database)")
      assert.notInclude(run.stderr, "    at ")
    }))

  it.scoped("without configuration: the workspace is created and chat says how to configure a provider", () =>
    Effect.gen(function*() {
      const home = NodePath.join(yield* workspaceWith([]), "fresh")
      const run = yield* myclaw(["chat", "hi"], { MYCLAW_HOME: home })
      assert.strictEqual(run.code, 1)
      assert.strictEqual(run.stdout, "")
      assert.include(run.stderr, "no LLM provider is configured")
      assert.include(run.stderr, "myclaw.example.json")
      for (const file of ["SOUL.md", "IDENTITY.md", "USER.md", "MEMORY.md", "myclaw.example.json"]) {
        assert.isTrue(NodeFs.existsSync(NodePath.join(home, file)), file)
      }
    }))

  it.scoped("an invalid configuration stops with a message naming the field", () =>
    Effect.gen(function*() {
      const home = yield* workspaceWith([], { maxSteps: "ten" })
      const run = yield* myclaw(["chat", "hi"], { MYCLAW_HOME: home })
      assert.strictEqual(run.code, 1)
      assert.include(run.stderr, "maxSteps")
      assert.include(run.stderr, "myclaw.json")
    }))

  it.scoped("a script that is not valid stops with a message naming the entry", () =>
    Effect.gen(function*() {
      const home = yield* workspaceWith([{ text: 42 }])
      const run = yield* myclaw(["chat", "hi"], { MYCLAW_HOME: home })
      assert.strictEqual(run.code, 1)
      assert.include(run.stderr, "script.json")
      assert.include(run.stderr, "[0]")
    }))

  it.effect("bad arguments exit 2 with the usage", () =>
    Effect.gen(function*() {
      const run = yield* myclaw(["chat", "--jsn", "hi"])
      assert.strictEqual(run.code, 2)
      assert.include(run.stderr, "unknown option --jsn")
      assert.include(run.stderr, "Usage:")
    }))
})

describe("myclaw serve", () => {
  it.scoped("answers /health and stops cleanly on SIGTERM", () =>
    Effect.gen(function*() {
      const home = yield* workspaceWith([])
      const child = spawn("node", [main, "serve"], {
        env: { ...process.env, MYCLAW_HOME: home, MYCLAW_HTTP_PORT: "0" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      const address = yield* Effect.async<string>((resume) => {
        let seen = ""
        child.stdout.on("data", (chunk: Buffer) => {
          seen += chunk.toString()
          const match = /Listening on (http:\/\/[\d.]+:\d+)/.exec(seen)
          if (match) resume(Effect.succeed(match[1]!))
        })
      })
      const response = yield* Effect.promise(() => fetch(`${address}/health`))
      assert.strictEqual(response.status, 200)
      const health = yield* Effect.promise(() => response.json() as Promise<Record<string, unknown>>)
      assert.strictEqual(health.status, "ok")
      assert.deepInclude(health.llm as object, { configured: true })
      const code = yield* Effect.async<number | null>((resume) => {
        child.on("exit", (exitCode) => resume(Effect.succeed(exitCode)))
        child.kill("SIGTERM")
      })
      assert.strictEqual(code, 0)
    }))
})
