import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, HashMap, Layer, List, Logger, LogLevel, Redacted, Schema } from "effect"
import { randomBytes } from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { ToolExecutionError } from "../../src/domain/Errors.js"
import { defineTool } from "../../src/domain/Tool.js"
import { AuditLogFile } from "../../src/layers/audit/AuditLogFile.js"
import { LlmLive } from "../../src/layers/llm/LlmLive.js"
import { SecretStoreFile } from "../../src/layers/secrets/SecretStoreFile.js"
import { AgentRuntime } from "../../src/services/AgentRuntime.js"
import { Secrets } from "../../src/services/Secrets.js"
import { SecretStore } from "../../src/services/SecretStore.js"
import { Workspace } from "../../src/services/Workspace.js"
import { Loopback, postJson, serve, ServedGraph, TOKEN } from "../http/support.js"
import { localServer } from "../support/LocalServer.js"

const CANARY = `canary-${randomBytes(12).toString("hex")}`

/** Forms of the canary that would betray it: as is, and base64 (a ciphertext is neither). */
const betrayals = [CANARY, Buffer.from(CANARY).toString("base64").replace(/=+$/, "")]
const assertClean = (where: string, text: string) => {
  for (const form of betrayals) assert.notInclude(text, form, `the canary reached ${where}`)
}

/** A tool that needs a credential: it resolves it at execution and, carelessly, echoes it back. */
const leakyTool = Effect.map(Secrets, (secrets) =>
  defineTool({
    name: "call_api",
    description: "Calls the API with the owner's token.",
    parameters: Schema.Struct({ mode: Schema.Literal("echo", "fail", "crash") }),
    hasSideEffects: false,
    external: true,
    execute: ({ mode }) =>
      Effect.flatMap(Effect.orDie(secrets.resolve("CANARY_TOKEN")), (token) => {
        const value = Redacted.value(token)
        if (mode === "echo") {
          return Effect.as(
            Effect.logDebug(`calling the API with ${value}`).pipe(Effect.annotateLogs("token", value)),
            { status: "success", content: `200 OK {"authorization":"Bearer ${value}"}` } as const
          )
        }
        if (mode === "fail") {
          return Effect.fail(new ToolExecutionError({ tool: "call_api", message: `401: token ${value} rejected` }))
        }
        return Effect.dieMessage(`client crashed holding ${value}`)
      })
  }))

const call = (id: string, mode: string) => ({
  body: {
    id: `chatcmpl-${id}`,
    object: "chat.completion",
    created: 1,
    model: "gpt-4o",
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: null,
        tool_calls: [{ id, type: "function", function: { name: "call_api", arguments: JSON.stringify({ mode }) } }]
      },
      finish_reason: "tool_calls"
    }],
    usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 }
  }
})
const answer = (text: string) => ({
  body: {
    id: "chatcmpl-end",
    object: "chat.completion",
    created: 1,
    model: "gpt-4o",
    choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
    usage: { prompt_tokens: 100, completion_tokens: 5, total_tokens: 105 }
  }
})

/** Every file under `dir`, with its text (bytes read as latin1, so binary files are searched too). */
const filesUnder = (dir: string): ReadonlyArray<readonly [string, string]> =>
  NodeFs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const file = NodePath.join(entry.parentPath, entry.name)
      return [file, NodeFs.readFileSync(file, "latin1")] as const
    })

const tempDir = Effect.acquireRelease(
  Effect.sync(() => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "myclaw-canary-keys-"))),
  (dir) => Effect.sync(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
)

describe("secret canary", () => {
  it.scoped("a secret a tool resolves and echoes reaches no prompt, trace, log line, audit file or HTTP answer", () =>
    Effect.gen(function*() {
      const keys = yield* tempDir
      const provider = yield* localServer([
        call("c1", "echo"),
        call("c2", "fail"),
        call("c3", "crash"),
        answer("The API answered."),
        call("c4", "echo"),
        answer("Done over HTTP.")
      ])
      const logs: Array<string> = []
      const capture = Logger.add(Logger.make((options) => {
        const annotations = HashMap.toEntries(options.annotations).map(([key, value]) => `${key}=${String(value)}`)
        logs.push(
          [Logger.logfmtLogger.log(options), ...annotations, ...List.toArray(options.spans).map(String)].join(" ")
        )
      }))
      const config = ConfigProvider.fromMap(
        new Map([["MYCLAW_SECRET_KEY", randomBytes(32).toString("hex")], ["MYCLAW_KEY_DIR", keys]])
      )

      yield* Effect.gen(function*() {
        const workspace = yield* Workspace
        yield* Effect.provide(
          Effect.flatMap(SecretStore, (store) => store.set("CANARY_TOKEN", Redacted.make(CANARY))),
          SecretStoreFile
        )
        const trace = yield* (yield* AgentRuntime).handle({
          userMessage: "check the API",
          sessionId: "canary",
          channel: "cli:owner"
        })
        assert.strictEqual(trace.outcome, "success")
        assert.strictEqual(trace.steps.filter((step) => step.kind === "action").length, 3)

        yield* serve()
        const response = yield* postJson("/v1/turns", { message: "check it again", session_id: "canary-http" }, TOKEN)
        const body = yield* response.text
        assert.strictEqual(response.status, 200, body)
        assert.include(body, "[secret:CANARY_TOKEN]", "the echoed token is in the HTTP answer, redacted")
        assertClean("the HTTP answer", body)

        // The tool did see the value and echo it: what reached the model is the marker, in all three shapes.
        const prompts = provider.requests.map((request) => request.body)
        assert.strictEqual(prompts.length, 6)
        const sent = prompts.join("\n")
        assert.include(sent, "Bearer [secret:CANARY_TOKEN]")
        assert.include(sent, "401: token [secret:CANARY_TOKEN] rejected")
        assert.include(sent, "client crashed holding [secret:CANARY_TOKEN]")
        prompts.forEach((prompt, i) => assertClean(`prompt ${i + 1} sent to the provider`, prompt))

        assert.isNotEmpty(logs.filter((line) => line.includes("[secret:CANARY_TOKEN]")), "the crash was logged")
        assert.isNotEmpty(
          logs.filter((line) => line.includes("calling the API with [secret:CANARY_TOKEN]")),
          "what a tool logs itself is redacted too"
        )
        logs.forEach((line) => assertClean("a log line", line))

        const files = filesUnder(workspace.root)
        const names = files.map(([file]) => NodePath.relative(workspace.root, file))
        assert.include(names, NodePath.join(".state", "secrets.json"))
        assert.isTrue(names.some((name) => name.startsWith(NodePath.join(".audit", "traces"))), names.join(", "))
        assert.isTrue(names.some((name) => /^\.audit\/\d{4}-\d{2}\.jsonl$/.test(name)), names.join(", "))
        for (const [file, text] of [...files, ...filesUnder(keys)]) assertClean(file, text)
      }).pipe(
        Effect.provide(Layer.merge(
          ServedGraph({
            llm: LlmLive,
            traceStore: "file",
            audit: AuditLogFile,
            tools: Effect.map(leakyTool, (tool) => [tool]),
            config: {
              tiers: { frontier: [{ provider: "openai", model: "gpt-4o", baseUrl: `${provider.url}/v1` }] },
              pricing: { "gpt-4o": { inputPerMTok: 2.5, cachedInputPerMTok: 1.25, outputPerMTok: 10 } }
            }
          }),
          Loopback
        )),
        Effect.provide(capture),
        Logger.withMinimumLogLevel(LogLevel.All),
        Effect.withConfigProvider(config)
      )
    }))
})
