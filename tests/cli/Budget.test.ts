import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { myclaw, workspaceWith } from "../support/Cli.js"

const digest = (file: string) => NodeCrypto.createHash("sha256").update(NodeFs.readFileSync(file)).digest("hex")

const pricing = { pricing: { "scripted": { inputPerMTok: 1, cachedInputPerMTok: 0, outputPerMTok: 0 } } }

describe("myclaw budget", () => {
  it.scoped("on a workspace with no budget yet: shows zeros and creates no budget file", () =>
    Effect.gen(function*() {
      const home = yield* workspaceWith([])
      const run = yield* myclaw(["budget"], { MYCLAW_HOME: home })
      assert.strictEqual(run.code, 0, run.stderr)
      assert.include(run.stdout, "spent today   0.0000 EUR")
      assert.isFalse(NodeFs.existsSync(NodePath.join(home, ".state", "budget.sqlite")))
      assert.isFalse(NodeFs.existsSync(NodePath.join(home, ".audit", "budget.json")))
    }))

  it.scoped("a reservation left by a stopped process is shown as spent, and the store is not written", () =>
    Effect.gen(function*() {
      const home = yield* workspaceWith([{ text: "hello" }], pricing)
      const turn = yield* myclaw(["chat", "hi"], { MYCLAW_HOME: home })
      assert.strictEqual(turn.code, 0, turn.stderr)
      const file = NodePath.join(home, ".state", "budget.sqlite")
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO budget_reservations (id, eur, reserved_at) VALUES ('crashed', 0.25, ${
          Date.now() - 3_600_000
        })`
      }).pipe(Effect.provide(SqliteClient.layer({ filename: file, disableWAL: true })), Effect.scoped, Effect.orDie)
      const before = digest(file)
      const run = yield* myclaw(["budget"], { MYCLAW_HOME: home })
      assert.strictEqual(run.code, 0, run.stderr)
      assert.match(run.stdout, /spent today   0\.25\d\d EUR/)
      assert.include(run.stdout, "in flight     0.0000 EUR")
      assert.strictEqual(digest(file), before, "the read-only command changed the budget store")
      assert.deepStrictEqual(NodeFs.readdirSync(NodePath.dirname(file)).filter((name) => name.startsWith("budget")), [
        "budget.sqlite"
      ])
    }))

  it.scoped("with no budget database: today's spend is rebuilt from the audit log, and nothing is written", () =>
    Effect.gen(function*() {
      const dearer = { pricing: { "scripted": { inputPerMTok: 1000, cachedInputPerMTok: 0, outputPerMTok: 0 } } }
      const home = yield* workspaceWith([{ text: "hello", usage: { input: 1000, output: 0 } }], dearer)
      const turn = yield* myclaw(["chat", "hi"], { MYCLAW_HOME: home })
      assert.strictEqual(turn.code, 0, turn.stderr)
      const spent = (stdout: string) => /spent today +(\S+) EUR/.exec(stdout)?.[1]
      const stored = yield* myclaw(["budget"], { MYCLAW_HOME: home })
      assert.strictEqual(stored.code, 0, stored.stderr)
      assert.notStrictEqual(spent(stored.stdout), "0.0000", stored.stdout)
      const state = NodePath.join(home, ".state")
      for (const name of NodeFs.readdirSync(state).filter((file) => file.startsWith("budget.sqlite"))) {
        NodeFs.rmSync(NodePath.join(state, name))
      }
      const rebuilt = yield* myclaw(["budget"], { MYCLAW_HOME: home })
      assert.strictEqual(rebuilt.code, 0, rebuilt.stderr)
      assert.strictEqual(spent(rebuilt.stdout), spent(stored.stdout), rebuilt.stdout)
      assert.isFalse(NodeFs.existsSync(NodePath.join(state, "budget.sqlite")))
    }))
})
