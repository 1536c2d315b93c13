import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { type Command, parseArgs } from "../../src/cli/Args.js"

const ok = (argv: ReadonlyArray<string>): Command => {
  const parsed = parseArgs(argv)
  if (Either.isLeft(parsed)) return assert.fail(`${argv.join(" ")}: ${parsed.left.message}`)
  return parsed.right
}

const usageError = (argv: ReadonlyArray<string>): string => {
  const parsed = parseArgs(argv)
  if (Either.isRight(parsed)) return assert.fail(`${argv.join(" ")} should not parse, got ${parsed.right._tag}`)
  assert.strictEqual(parsed.left._tag, "UsageError")
  return parsed.left.message
}

const chat = (message: string, session: string | undefined = undefined, json = false): Command => ({
  _tag: "Chat",
  message,
  session,
  json
})

describe("parseArgs", () => {
  it.effect("sessions list, show ID, forget ID; anything else names what is wrong", () =>
    Effect.sync(() => {
      assert.deepStrictEqual({ ...ok(["sessions"]) }, { _tag: "SessionsList" })
      assert.deepStrictEqual({ ...ok(["sessions", "list"]) }, { _tag: "SessionsList" })
      assert.deepStrictEqual({ ...ok(["sessions", "show", "s1"]) }, { _tag: "SessionsShow", id: "s1" })
      assert.deepStrictEqual({ ...ok(["sessions", "forget", "s1"]) }, { _tag: "SessionsForget", id: "s1" })
      assert.include(usageError(["sessions", "show"]), "sessions show takes one session id")
      assert.include(usageError(["sessions", "forget", "a", "b"]), "sessions forget takes one session id")
      assert.include(usageError(["sessions", "drop", "a"]), "unknown subcommand \"drop\"")
    }))

  it.effect("chat with a message", () =>
    Effect.sync(() => {
      assert.deepStrictEqual({ ...ok(["chat", "hello there"]) }, chat("hello there"))
    }))

  it.effect("chat with --session ID and --session=ID, in any position", () =>
    Effect.sync(() => {
      assert.deepStrictEqual({ ...ok(["chat", "hi", "--session", "alice-1"]) }, chat("hi", "alice-1"))
      assert.deepStrictEqual({ ...ok(["chat", "--session=telegram:@bob", "hi"]) }, chat("hi", "telegram:@bob"))
      assert.deepStrictEqual({ ...ok(["chat", "--session", "a.b_c", "hi", "--json"]) }, chat("hi", "a.b_c", true))
    }))

  it.effect("chat with --json", () =>
    Effect.sync(() => {
      assert.deepStrictEqual({ ...ok(["chat", "--json", "hi"]) }, chat("hi", undefined, true))
    }))

  it.effect("a message that is a single dash or starts with one is still a message", () =>
    Effect.sync(() => {
      assert.deepStrictEqual({ ...ok(["chat", "-5 degrees?"]) }, chat("-5 degrees?"))
    }))

  it.effect("chat without a message, or with a blank one", () =>
    Effect.sync(() => {
      assert.include(usageError(["chat"]), "chat needs a message")
      assert.include(usageError(["chat", "   "]), "chat needs a message")
      assert.include(usageError(["chat", "--json"]), "chat needs a message")
    }))

  it.effect("--session without a valid ID", () =>
    Effect.sync(() => {
      assert.include(usageError(["chat", "hi", "--session"]), "--session needs an ID")
      assert.include(usageError(["chat", "hi", "--session="]), "--session needs an ID")
      assert.include(usageError(["chat", "hi", "--session", "--json"]), "--session needs an ID")
      assert.include(usageError(["chat", "hi", "--session", "a b"]), "use letters, digits")
      assert.include(usageError(["chat", "hi", "--session", "../../etc"]), "use letters, digits")
      assert.include(usageError(["chat", "hi", "--session", "x".repeat(129)]), "at most 128")
      assert.deepStrictEqual({ ...ok(["chat", "hi", "--session", "x".repeat(128)]) }, chat("hi", "x".repeat(128)))
    }))

  it.effect("an unknown option", () =>
    Effect.sync(() => {
      assert.strictEqual(usageError(["chat", "hi", "--verbose"]), "chat: unknown option --verbose")
    }))

  it.effect("two positional messages: asks to quote them", () =>
    Effect.sync(() => {
      const message = usageError(["chat", "hello", "world"])
      assert.include(message, "chat takes one message")
      assert.include(message, "myclaw chat \"hello world\"")
    }))

  it.effect("serve, and serve with extra arguments", () =>
    Effect.sync(() => {
      assert.strictEqual(ok(["serve"])._tag, "Serve")
      assert.strictEqual(usageError(["serve", "--port", "80"]), "serve takes no arguments, got --port 80")
    }))

  it.effect("help, --help, -h and no arguments", () =>
    Effect.sync(() => {
      for (const argv of [["help"], ["--help"], ["-h"], []]) assert.strictEqual(ok(argv)._tag, "Help", argv.join(" "))
    }))

  it.effect("an unknown command", () =>
    Effect.sync(() => {
      assert.strictEqual(usageError(["chta", "hi"]), "unknown command \"chta\"")
    }))

  it.effect("<command> --help is the usage (exit 0), whatever the command; --version the version", () =>
    Effect.sync(() => {
      for (
        const argv of [["chat", "--help"], ["audit", "query", "--help"], ["budget", "override", "-h"], [
          "serve",
          "--help"
        ]]
      ) {
        assert.strictEqual(ok(argv)._tag, "Help", argv.join(" "))
      }
      for (const argv of [["--version"], ["-V"], ["version"]]) assert.strictEqual(ok(argv)._tag, "Version")
    }))

  it.effect("audit query: --limit within what SQLite can take, each time flag named once, --since before --until", () =>
    Effect.sync(() => {
      for (const limit of ["99999999999999999999", "1e3", "0", "-1", "1000001"]) {
        assert.include(
          usageError(["audit", "query", "--limit", limit]),
          "--limit must be a whole number from 1 to 1000000"
        )
      }
      assert.strictEqual(ok(["audit", "query", "--limit", "1000000"])._tag, "AuditQuery")
      const since = usageError(["audit", "query", "--since", "yesterday"])
      assert.strictEqual(since.split("--since").length - 1, 1, since)
      assert.include(
        usageError(["audit", "query", "--since", "2026-05-02", "--until", "2026-05-01"]),
        "--since 2026-05-02 is after --until 2026-05-01"
      )
      assert.strictEqual(ok(["audit", "query", "--since", "2026-05-01", "--until", "2026-05-01"])._tag, "AuditQuery")
    }))
})
