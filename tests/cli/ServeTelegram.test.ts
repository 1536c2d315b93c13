import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as NodePath from "node:path"
import { FakeBotApi, OWNER, textMessage, TOKEN } from "../channels/telegram/FakeBotApi.js"
import { main, workspaceWith } from "../support/Cli.js"

/** `myclaw serve` as a child process with Telegram on, pointed at the fake Bot API; its output collected. */
const serveWithTelegram = (home: string, apiRoot: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn("node", [main, "serve"], {
        env: {
          ...process.env,
          MYCLAW_HOME: home,
          MYCLAW_KEY_DIR: NodePath.join(home, ".keys"),
          MYCLAW_HTTP_PORT: "0",
          TELEGRAM_BOT_TOKEN: TOKEN,
          MYCLAW_TELEGRAM_API_ROOT: apiRoot
        },
        stdio: ["ignore", "pipe", "pipe"]
      })
      const output = { stdout: "", stderr: "" }
      child.stdout.on("data", (chunk: Buffer) => (output.stdout += chunk.toString()))
      child.stderr.on("data", (chunk: Buffer) => (output.stderr += chunk.toString()))
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
      return { child, output, exited }
    }),
    ({ child }) => Effect.sync(() => child.kill("SIGKILL"))
  )

describe("myclaw serve with TELEGRAM_BOT_TOKEN", () => {
  it.live("answers the owner on Telegram, never logs the token, and stops cleanly on SIGTERM", () =>
    Effect.scoped(Effect.gen(function*() {
      const fake = yield* FakeBotApi
      const home = yield* workspaceWith([{ text: "Hello from serve" }], { telegram: { allowedUserIds: [OWNER.id] } })
      const served = yield* serveWithTelegram(home, fake.apiRoot)
      fake.push(textMessage(OWNER, "hello"))
      const answer = yield* fake.awaitCall((call) => call.method === "sendMessage")
      assert.strictEqual(answer.payload.text, "Hello from serve")
      served.child.kill("SIGTERM")
      assert.strictEqual(yield* Effect.promise(() => served.exited), 0)
      assert.notInclude(served.output.stdout + served.output.stderr, TOKEN)
      assert.include(served.output.stdout, "telegram: polling for updates")
    })))

  it.live("with no owner, shows a pairing code on the terminal only, and the code pairs", () =>
    Effect.scoped(Effect.gen(function*() {
      const fake = yield* FakeBotApi
      const home = yield* workspaceWith([{ text: "Hi, owner" }])
      const served = yield* serveWithTelegram(home, fake.apiRoot)
      const code = yield* Effect.async<string>((resume) => {
        const check = () => {
          const match = /\/pair ([A-Z2-9]{10})/.exec(served.output.stderr)
          if (match !== null) resume(Effect.succeed(match[1]!))
          return match !== null
        }
        if (!check()) served.child.stderr.on("data", () => void check())
      })
      fake.push(textMessage(OWNER, `/pair ${code}`, 1))
      fake.push(textMessage(OWNER, "hello", 2))
      yield* fake.awaitCall((call) => call.method === "sendMessage", 2)
      assert.sameMembers(fake.sent("sendMessage").map((call) => String(call.payload.text)), [
        "Paired: you are myclaw's owner now. /help says what I do.",
        "Hi, owner"
      ])
      served.child.kill("SIGTERM")
      assert.strictEqual(yield* Effect.promise(() => served.exited), 0)
      assert.notInclude(served.output.stdout, code)
    })))
})
