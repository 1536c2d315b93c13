import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as NodePath from "node:path"
import { main, myclaw, workspaceWith } from "../support/Cli.js"

/** An answer a page could have talked a model into: clear the screen, write the clipboard, retitle the window. */
const hostile = "Done.\u001b[2J\u001b]52;c;aGk=\u0007\u001b]0;pwned\u0007\u009b31m red\ttab\nnext line"

/** `myclaw` on a pseudo-terminal (script(1), util-linux): what a person at a terminal is shown. */
const onTerminal = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.async<string, Error>((resume) => {
    const command = ["node", main, ...args].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(" ")
    execFile(
      "script",
      ["-qec", command, "/dev/null"],
      { env: { ...process.env, ...env } },
      (error, stdout) => resume(error ? Effect.fail(error) : Effect.succeed(stdout))
    )
  })

describe("text from a model, a page or a file on the owner's terminal", () => {
  it.scopedLive("chat shows control characters as \\u escapes on a terminal, and gives them exactly to a pipe", () =>
    Effect.gen(function*() {
      const home = yield* workspaceWith([{ text: hostile }, { text: hostile }])
      const env = { MYCLAW_HOME: home, MYCLAW_KEY_DIR: NodePath.join(home, ".keys") }
      const shown = yield* onTerminal(["chat", "hello", "--session", "s1"], env)
      assert.notMatch(shown, /[\u001b\u0007\u009b]/)
      assert.include(shown, "Done.\\u001b[2J\\u001b]52;c;aGk=\\u0007\\u001b]0;pwned\\u0007\\u009b31m red\ttab")
      assert.include(shown, "next line")
      const piped = yield* myclaw(["chat", "again", "--session", "s1"], env)
      assert.strictEqual(piped.code, 0, piped.stderr)
      assert.strictEqual(piped.stdout, `${hostile}\n`)
      // Recorded turns read back for a person: the timeline, the listing and the session.
      const listed = yield* onTerminal(["trace", "list"], env)
      assert.notMatch(listed, /[\u001b\u0007\u009b]/)
      const session = yield* onTerminal(["sessions", "show", "s1"], env)
      assert.notMatch(session, /[\u001b\u0007\u009b]/)
      assert.include(session, "\\u001b[2J")
      const id = /trace ([0-9a-f-]{36})/.exec(piped.stderr)![1]!
      const timeline = yield* onTerminal(["trace", "show", id], env)
      assert.notMatch(timeline, /[\u001b\u0007\u009b]/)
      assert.include(timeline, "\\u001b[2J")
    }))
})
