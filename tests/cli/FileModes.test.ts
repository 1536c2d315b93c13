import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { myclaw } from "../support/Cli.js"

/** Every path under `root` (itself included) whose mode lets group or others in, as `mode path`. */
const openToOthers = (root: string, except: ReadonlyArray<string> = []): Array<string> => {
  const found: Array<string> = []
  const visit = (path: string) => {
    const stat = NodeFs.lstatSync(path)
    if ((stat.mode & 0o077) !== 0 && !except.includes(path)) {
      found.push(`${(stat.mode & 0o777).toString(8)} ${NodePath.relative(NodePath.dirname(root), path)}`)
    }
    if (stat.isDirectory()) { for (const name of NodeFs.readdirSync(path)) visit(NodePath.join(path, name)) }
  }
  visit(root)
  return found
}

/** A folder for the test, and the process umask set to the common 022 while it runs (children inherit it). */
const withUmask022 = Effect.acquireRelease(
  Effect.sync(() => ({
    parent: NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "myclaw-modes-")),
    umask: process.umask(0o022)
  })),
  ({ parent, umask }) =>
    Effect.sync(() => {
      process.umask(umask)
      NodeFs.rmSync(parent, { recursive: true, force: true })
    })
)

describe("what myclaw keeps is readable by its owner alone", () => {
  it.scopedLive("under umask 022: the workspace it creates, its state, audit, traces, undo copies and backups", () =>
    Effect.gen(function*() {
      const { parent } = yield* withUmask022
      const home = NodePath.join(parent, "workspace")
      const keys = NodePath.join(parent, "keys")
      const env = { MYCLAW_HOME: home, MYCLAW_KEY_DIR: keys }
      // The first run creates the workspace; with no provider configured it has nobody to answer.
      assert.strictEqual((yield* myclaw(["chat", "hello"], env)).code, 1)
      const script = [
        { toolCalls: [{ name: "fs_write", args: { path: "notes/a.md", content: "first" } }] },
        { toolCalls: [{ name: "fs_write", args: { path: "notes/a.md", content: "second" } }] },
        { text: "Written." }
      ]
      // The owner's own files, written as an owner who cares would.
      NodeFs.writeFileSync(NodePath.join(home, "script.json"), JSON.stringify(script), { mode: 0o600 })
      NodeFs.writeFileSync(
        NodePath.join(home, "myclaw.json"),
        JSON.stringify({
          tiers: { frontier: [{ provider: "scripted", script: "script.json" }] },
          policy: { rules: [{ match: "fs_write:notes/**", decision: "allow", reason: "notes" }] }
        }),
        { mode: 0o600 }
      )
      const chat = yield* myclaw(["chat", "write my note", "--session", "s1"], env)
      assert.strictEqual(chat.code, 0, chat.stderr)
      assert.include(chat.stdout, "Written.")
      const dest = NodePath.join(parent, "backups")
      const made = yield* myclaw(["backup", "--dest", dest], env)
      assert.strictEqual(made.code, 0, made.stderr)

      // What the tool wrote is the owner's file, made as any editor makes one (the umask); the folder it sits in is
      // the workspace's, which myclaw made owner-only.
      const written = [NodePath.join(home, "notes"), NodePath.join(home, "notes", "a.md")]
      assert.deepStrictEqual(openToOthers(home, written), [])
      assert.deepStrictEqual(openToOthers(dest), [])
      assert.deepStrictEqual(openToOthers(keys), [])
      // The run kept what the check must see: the databases, the audit log, the traces and an undo copy.
      const kept = NodeFs.readdirSync(home, { recursive: true, encoding: "utf8" })
      for (const expected of ["sessions.sqlite", "approvals.sqlite", "budget.sqlite", "plans.sqlite"]) {
        assert.isTrue(kept.some((path) => path.endsWith(`.state${NodePath.sep}${expected}`)), expected)
      }
      assert.isTrue(kept.some((path) => /^\.audit\/.*\.jsonl$/.test(path)), kept.join(", "))
      assert.isTrue(kept.some((path) => path.includes("undo")), kept.join(", "))
      assert.strictEqual(NodeFs.readdirSync(dest).filter((name) => name.endsWith(".tar.gz")).length, 1)
    }))

  it.scopedLive("a state file an earlier version left open to others is made owner-only when it is opened", () =>
    Effect.gen(function*() {
      const { parent } = yield* withUmask022
      const home = NodePath.join(parent, "workspace")
      const env = { MYCLAW_HOME: home, MYCLAW_KEY_DIR: NodePath.join(parent, "keys") }
      NodeFs.mkdirSync(NodePath.join(home, ".state"), { recursive: true, mode: 0o755 })
      NodeFs.writeFileSync(
        NodePath.join(home, "script.json"),
        JSON.stringify([{ text: "One." }, { text: "Two." }]),
        { mode: 0o600 }
      )
      NodeFs.writeFileSync(
        NodePath.join(home, "myclaw.json"),
        JSON.stringify({ tiers: { frontier: [{ provider: "scripted", script: "script.json" }] } }),
        { mode: 0o600 }
      )
      assert.strictEqual((yield* myclaw(["chat", "one", "--session", "s1"], env)).code, 0)
      const state = NodePath.join(home, ".state")
      const databases = NodeFs.readdirSync(state).filter((name) => name.endsWith(".sqlite"))
      assert.isAbove(databases.length, 2, databases.join(", "))
      for (const name of databases) NodeFs.chmodSync(NodePath.join(state, name), 0o644)
      assert.strictEqual((yield* myclaw(["chat", "two", "--session", "s1"], env)).code, 0)
      // The folder is the owner's to set (it was made by hand here); the databases in it are myclaw's.
      assert.deepStrictEqual(openToOthers(state, [state]), [])
    }))
})
