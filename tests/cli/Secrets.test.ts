import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { myclaw, workspaceWith } from "../support/Cli.js"

const VALUE = "ghp_canaryCliValue0123456789"
const KEY = randomBytes(32).toString("base64")

/** Every file under `dir`, as text. */
const allText = (dir: string): string =>
  NodeFs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => NodeFs.readFileSync(NodePath.join(entry.parentPath, entry.name), "latin1"))
    .join("\n")

describe("myclaw secrets", () => {
  it.scoped("set reads stdin, list shows names only, rm removes; both changes are audited without the value", () =>
    Effect.gen(function*() {
      const home = yield* workspaceWith([])
      const env = { MYCLAW_HOME: home, MYCLAW_SECRET_KEY: KEY }
      const set = yield* myclaw(["secrets", "set", "GITHUB_TOKEN"], env, `${VALUE}\n`)
      assert.strictEqual(set.code, 0, set.stderr)
      assert.include(set.stdout, "GITHUB_TOKEN created")
      const list = yield* myclaw(["secrets", "list"], env)
      assert.strictEqual(list.code, 0, list.stderr)
      assert.match(list.stdout, /GITHUB_TOKEN\s+\d{4}-\d{2}-\d{2}T/)
      const query = yield* myclaw(["audit", "query", "--kind", "secret_changed", "--json"], env)
      assert.include(query.stdout, "\"name\":\"GITHUB_TOKEN\"")
      assert.include(query.stdout, "\"action\":\"created\"")
      const rm = yield* myclaw(["secrets", "rm", "GITHUB_TOKEN"], env)
      assert.strictEqual(rm.code, 0, rm.stderr)
      const again = yield* myclaw(["secrets", "rm", "GITHUB_TOKEN"], env)
      assert.strictEqual(again.code, 1)
      assert.include(again.stderr, "no secret named GITHUB_TOKEN")
      const after = yield* myclaw(["audit", "query", "--kind", "secret_changed", "--json"], env)
      assert.include(after.stdout, "\"action\":\"removed\"")
      for (const run of [set, list, query, rm, again, after]) assert.notInclude(run.stdout + run.stderr, VALUE)
      assert.notInclude(allText(home), VALUE)
    }))

  it.scoped("a value given as an argument is refused, never echoed, and nothing is stored", () =>
    Effect.gen(function*() {
      const home = yield* workspaceWith([])
      const env = { MYCLAW_HOME: home, MYCLAW_SECRET_KEY: KEY }
      const run = yield* myclaw(["secrets", "set", "GITHUB_TOKEN", VALUE], env)
      assert.strictEqual(run.code, 2)
      assert.include(run.stderr, "takes the value on standard input, never as an argument")
      assert.notInclude(run.stdout + run.stderr, VALUE)
      assert.isFalse(NodeFs.existsSync(NodePath.join(home, ".state", "secrets.json")))
      const empty = yield* myclaw(["secrets", "set", "GITHUB_TOKEN"], env)
      assert.strictEqual(empty.code, 2)
      assert.include(empty.stderr, "no value on standard input")
    }))

  it.scoped("without a key, set says how to make one; a malformed key is named, never quoted", () =>
    Effect.gen(function*() {
      const home = yield* workspaceWith([])
      const noKey = yield* myclaw(
        ["secrets", "set", "X_TOKEN"],
        { MYCLAW_HOME: home, HOME: home, XDG_CONFIG_HOME: "" },
        VALUE
      )
      assert.strictEqual(noKey.code, 1)
      assert.include(noKey.stderr, "no secret-store key")
      const bad = yield* myclaw(["secrets", "set", "X_TOKEN"], {
        MYCLAW_HOME: home,
        MYCLAW_SECRET_KEY: "hunter2hunter2"
      }, VALUE)
      assert.strictEqual(bad.code, 1)
      assert.include(bad.stderr, "MYCLAW_SECRET_KEY: expected 32 bytes")
      assert.notInclude(bad.stderr, "hunter2")
      const help = yield* myclaw(["--help"])
      assert.include(help.stdout, "myclaw secrets set NAME")
    }))
})
