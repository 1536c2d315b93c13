import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Logger, LogLevel } from "effect"
import * as NodePath from "node:path"
import { decodeAppConfig } from "../../src/domain/AppConfig.js"
import { loadScript } from "../../src/layers/llm/ScriptedProvider.js"
import { loadConfigFile, MyclawConfigLive } from "../../src/layers/MyclawConfigLive.js"
import { makeWorkspace } from "../../src/layers/workspace/WorkspaceLive.js"
import { MyclawConfig } from "../../src/services/MyclawConfig.js"
import { Workspace } from "../../src/services/Workspace.js"

const tempFile = (text: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const dir = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-config-" })
    const file = NodePath.join(dir, "myclaw.json")
    yield* fs.writeFileString(file, text)
    return file
  })

const loadError = (text: string) => Effect.flatMap(tempFile(text), (file) => Effect.flip(loadConfigFile(file)))

/** MyclawConfigLive over a fresh temp workspace, with `env` as the whole environment. */
const live = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const workspace = yield* makeWorkspace(yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-ws-" }))
    const loaded = yield* Effect.either(
      Effect.provide(MyclawConfig, MyclawConfigLive).pipe(
        Effect.provideService(Workspace, workspace),
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))),
        Logger.withMinimumLogLevel(LogLevel.Error)
      )
    )
    return { workspace, loaded }
  }).pipe(Logger.withMinimumLogLevel(LogLevel.Error))

layer(NodeContext.layer)("loadConfigFile", (it) => {
  it.scoped("decodes {} to the defaults", () =>
    Effect.gen(function*() {
      const config = yield* loadConfigFile(yield* tempFile("{}"))
      assert.strictEqual(config.maxSteps, 10)
      assert.strictEqual(config.timeouts.llmMs, 60_000)
      assert.strictEqual(config.timeouts.toolMs, 30_000)
    }))

  it.scoped("a file saved with a UTF-8 byte order mark (as some Windows editors save) is read", () =>
    Effect.gen(function*() {
      const config = yield* loadConfigFile(yield* tempFile("\uFEFF{ \"maxSteps\": 7 }"))
      assert.strictEqual(config.maxSteps, 7)
    }))

  it.scoped("says when the file is not valid JSON, and names the file", () =>
    Effect.gen(function*() {
      const file = yield* tempFile("{ maxSteps: 3, }")
      const error = yield* Effect.flip(loadConfigFile(file))
      assert.strictEqual(error._tag, "ConfigFileError")
      assert.strictEqual(error.file, file)
      assert.strictEqual(error.reason, "InvalidJson")
      assert.include(error.message, "not valid JSON at line 1, column 3")
      assert.instanceOf(error.cause, SyntaxError, "the parser's error is kept, not flattened")
    }))

  it.scoped("names a field of the wrong type", () =>
    Effect.gen(function*() {
      const error = yield* loadError(`{"maxSteps": "ten"}`)
      assert.strictEqual(error.reason, "Invalid")
      assert.strictEqual(error.message, "invalid configuration:\n  maxSteps: expected a number, got \"ten\"")
    }))

  it.scoped("names an unknown provider", () =>
    Effect.gen(function*() {
      const error = yield* loadError(`{"tiers": {"frontier": [{"provider": "nope"}]}}`)
      assert.include(error.message, "tiers.frontier[0].provider: ")
    }))

  it.scoped("names an unknown top-level key", () =>
    Effect.gen(function*() {
      const error = yield* loadError(`{"maxSteps": 3, "maxStep": 4}`)
      assert.strictEqual(error.message, "invalid configuration:\n  maxStep: unknown field; did you mean \"maxSteps\"?")
    }))

  it.scoped("a typo deep in a provider: one line per problem, with its JSON path, and no Schema dump", () =>
    Effect.gen(function*() {
      const error = yield* loadError(
        `{"tiers": {"frontier": [{"provider": "openai", "modle": "gpt-4o"}]}, "budget": {"hardCapEur": -1}}`
      )
      assert.deepStrictEqual(error.message.split("\n"), [
        "invalid configuration:",
        "  tiers.frontier[0].modle: unknown field; did you mean \"model\"?",
        "  tiers.frontier[0].model: is missing",
        "  budget.hardCapEur: expected a non-negative number, got -1"
      ])
    }))

  it.scoped("a JSON syntax error says its line and column", () =>
    Effect.gen(function*() {
      const error = yield* loadError(`{\n  "maxSteps": 3,\n  "budget": }\n`)
      assert.include(error.message, "not valid JSON at line 3, column 13")
    }))

  it.scoped("fails with a ConfigFileError when the file cannot be read", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(loadConfigFile("/nonexistent/myclaw.json"))
      assert.strictEqual(error._tag, "ConfigFileError")
      assert.strictEqual(error.reason, "Unreadable")
      assert.include(error.message, "cannot read the configuration")
    }))
})

describe("MyclawConfigLive", () => {
  layer(NodeContext.layer)("with a file", (it) => {
    it.scoped("loads the file MYCLAW_CONFIG names", () =>
      Effect.gen(function*() {
        const file = yield* tempFile(`{"maxSteps": 4}`)
        const { loaded } = yield* live({ MYCLAW_CONFIG: file })
        assert.isTrue(loaded._tag === "Right")
        if (loaded._tag === "Right") {
          assert.strictEqual(loaded.right.config.maxSteps, 4)
          assert.strictEqual(loaded.right.file, file)
          assert.isTrue(loaded.right.loaded)
        }
      }))

    it.scoped("warns when the soft cap is above the hard cap (the default soft cap included)", () =>
      Effect.gen(function*() {
        const warnings: Array<string> = []
        const logger = Logger.make(({ logLevel, message }) => {
          if (logLevel._tag === "Warning") warnings.push(String(Array.isArray(message) ? message[0] : message))
        })
        const file = yield* tempFile(`{"budget": {"hardCapEur": 1}}`)
        const fs = yield* FileSystem.FileSystem
        const workspace = yield* makeWorkspace(yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-ws-" }))
        yield* Effect.provide(MyclawConfig, MyclawConfigLive).pipe(
          Effect.provideService(Workspace, workspace),
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["MYCLAW_CONFIG", file]]))),
          Effect.provide(Logger.replace(Logger.defaultLogger, logger))
        )
        assert.deepStrictEqual(warnings, [
          `${file}: budget.softCapEur (2 EUR) is above budget.hardCapEur (1 EUR), so Thoughts never move to ` +
          "local-fast before the hard cap stops them: set softCapEur below hardCapEur"
        ])
      }))

    it.scoped("fails when MYCLAW_CONFIG names a missing file", () =>
      Effect.gen(function*() {
        const { loaded, workspace } = yield* live({ MYCLAW_CONFIG: "/nonexistent/dir/myclaw.json" })
        assert.isTrue(loaded._tag === "Left")
        if (loaded._tag === "Left") {
          if (loaded.left._tag !== "ConfigFileError") return assert.fail(String(loaded.left))
          assert.strictEqual(loaded.left.file, "/nonexistent/dir/myclaw.json")
          assert.include(loaded.left.message, "does not exist")
          assert.strictEqual(loaded.left.reason, "Environment")
        }
        const fs = yield* FileSystem.FileSystem
        assert.isFalse(yield* fs.exists(NodePath.join(workspace.root, "myclaw.example.json")))
      }))

    it.scoped("fails on an invalid file instead of falling back to the defaults", () =>
      Effect.gen(function*() {
        const { loaded } = yield* live({ MYCLAW_CONFIG: yield* tempFile(`{"maxSteps": "ten"}`) })
        assert.isTrue(loaded._tag === "Left")
      }))
  })

  layer(NodeContext.layer)("without a file", (it) => {
    it.scoped("uses the defaults and writes a valid example configuration and script", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const { loaded, workspace } = yield* live({})
        assert.isTrue(loaded._tag === "Right")
        if (loaded._tag !== "Right") return
        assert.isFalse(loaded.right.loaded)
        assert.strictEqual(loaded.right.file, NodePath.join(workspace.root, "myclaw.json"))
        assert.strictEqual(loaded.right.config.maxSteps, 10)
        assert.strictEqual(loaded.right.config.timeouts.toolMs, 30_000)
        assert.isFalse(yield* fs.exists(loaded.right.file))

        const example = yield* loadConfigFile(NodePath.join(workspace.root, "myclaw.example.json"))
        const provider = example.tiers.frontier[0]
        if (provider?.provider !== "scripted") return assert.fail("the example should use a scripted provider")
        const script = yield* loadScript(NodePath.resolve(workspace.root, provider.script))
        assert.isAbove(script.length, 0)
      }))

    it.scoped("the example configuration is itself a valid configuration", () =>
      Effect.gen(function*() {
        const { workspace } = yield* live({})
        const fs = yield* FileSystem.FileSystem
        const text = yield* fs.readFileString(NodePath.join(workspace.root, "myclaw.example.json"))
        const config = yield* decodeAppConfig(JSON.parse(text))
        assert.strictEqual(config.tiers.frontier[0]?.provider, "scripted")
      }))

    it.scoped("does not overwrite an example the owner edited", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-ws-" })
        yield* fs.writeFileString(NodePath.join(dir, "myclaw.example.json"), "edited")
        const workspace = yield* makeWorkspace(dir)
        yield* Effect.provide(MyclawConfig, MyclawConfigLive).pipe(
          Effect.provideService(Workspace, workspace),
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map())),
          Logger.withMinimumLogLevel(LogLevel.Error)
        )
        assert.strictEqual(yield* fs.readFileString(NodePath.join(dir, "myclaw.example.json")), "edited")
      }).pipe(Logger.withMinimumLogLevel(LogLevel.Error)))
  })
})
