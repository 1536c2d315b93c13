import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { myclaw, workspaceWith } from "../support/Cli.js"

/** A read-only view of `source` at `target` (a bind mount); false where this machine does not allow mounts. */
const mountReadOnly = (source: string, target: string): boolean => {
  try {
    NodeFs.mkdirSync(target, { recursive: true })
    execFileSync("mount", ["--bind", source, target], { stdio: "ignore" })
    execFileSync("mount", ["-o", "remount,bind,ro", target], { stdio: "ignore" })
    return true
  } catch {
    try {
      execFileSync("umount", [target], { stdio: "ignore" })
    } catch {
      // Nothing was mounted.
    }
    return false
  }
}

const canMount = (() => {
  const probe = NodeFs.mkdtempSync("/tmp/myclaw-mount-probe-")
  const ok = mountReadOnly(probe, NodePath.join(probe, "view"))
  if (ok) execFileSync("umount", [NodePath.join(probe, "view")])
  NodeFs.rmSync(probe, { recursive: true, force: true })
  return ok
})()

describe("a workspace on a read-only file system", () => {
  it.scopedLive.skipIf(!canMount)(
    "chat names the path and EROFS; audit verify and query read it",
    () =>
      Effect.gen(function*() {
        const home = yield* workspaceWith([{ text: "Hi." }])
        const keys = NodePath.join(home, "..", `${NodePath.basename(home)}-keys`)
        assert.strictEqual((yield* myclaw(["chat", "hello"], { MYCLAW_HOME: home, MYCLAW_KEY_DIR: keys })).code, 0)
        const view = `${home}-ro`
        yield* Effect.acquireRelease(
          Effect.sync(() => assert.isTrue(mountReadOnly(home, view))),
          () =>
            Effect.sync(() => {
              execFileSync("umount", [view])
              NodeFs.rmdirSync(view)
            })
        )
        const env = { MYCLAW_HOME: view, MYCLAW_KEY_DIR: keys }
        const chat = yield* myclaw(["chat", "again"], env)
        assert.strictEqual(chat.code, 1)
        assert.include(chat.stderr, view)
        assert.include(chat.stderr, "EROFS: a read-only file system")
        assert.notInclude(chat.stderr, "    at ")
        const verify = yield* myclaw(["audit", "verify"], env)
        assert.strictEqual(verify.code, 0, verify.stderr)
        const query = yield* myclaw(["audit", "query", "--kind", "trace"], env)
        assert.strictEqual(query.code, 0, query.stderr)
        assert.include(query.stdout, "success: \"hello\"")
      }),
    60_000
  )
})
