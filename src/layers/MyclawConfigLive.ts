import { FileSystem } from "@effect/platform"
import { Config, Effect, Layer, ParseResult } from "effect"
import * as NodePath from "node:path"
import { AppConfig, decodeAppConfig } from "../domain/AppConfig.js"
import { configProblems, jsonSyntaxPosition } from "../domain/ConfigProblems.js"
import { ConfigFileError, messageOf } from "../domain/Errors.js"
import { OWNER_FILE } from "../domain/OwnerOnly.js"
import { MyclawConfig } from "../services/MyclawConfig.js"
import { Workspace } from "../services/Workspace.js"
import { exampleConfig, exampleScript } from "./workspace/WorkspaceDefaults.js"

/** Reads and decodes a configuration file; every problem names the file and the field. */
export const loadConfigFile = (file: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(file).pipe(
      Effect.mapError((error) =>
        new ConfigFileError({
          file,
          reason: "Unreadable",
          message: `cannot read the configuration: ${error.message}`,
          cause: error
        })
      )
    )
    const json = yield* Effect.try({
      try: (): unknown => JSON.parse(text),
      catch: (error) =>
        new ConfigFileError({
          file,
          reason: "InvalidJson",
          message: `the configuration is not valid JSON${
            ((at) => at === undefined ? "" : ` at line ${at.line}, column ${at.column}`)(jsonSyntaxPosition(text))
          }: ${messageOf(error)}`,
          cause: error
        })
    })
    return yield* decodeAppConfig(json).pipe(
      Effect.mapError((error) =>
        new ConfigFileError({
          file,
          reason: "Invalid",
          message: `invalid configuration:\n${
            configProblems(ParseResult.ArrayFormatter.formatErrorSync(error)).map((line) => `  ${line}`).join("\n")
          }`,
          cause: error
        })
      )
    )
  })

/**
 * The configuration at `MYCLAW_CONFIG` (default `<workspace>/myclaw.json`). Without a file, the defaults
 * are in force (no LLM provider) and an example configuration is written next to where the file goes.
 */
const makeMyclawConfig = (options: { readonly writeExample: boolean }) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const workspace = yield* Workspace
    const configured = yield* Config.option(Config.string("MYCLAW_CONFIG"))
    const file = NodePath.resolve(
      configured._tag === "Some" ? configured.value : NodePath.join(workspace.root, "myclaw.json")
    )
    const exists = yield* fs.exists(file).pipe(Effect.orElseSucceed(() => false))
    if (exists) {
      const config = yield* loadConfigFile(file)
      const { hardCapEur, softCapEur } = config.budget
      if (softCapEur > hardCapEur) {
        yield* Effect.logWarning(
          `${file}: budget.softCapEur (${softCapEur} EUR) is above budget.hardCapEur (${hardCapEur} EUR), so Thoughts ` +
            "never move to local-fast before the hard cap stops them: set softCapEur below hardCapEur"
        )
      }
      return MyclawConfig.of({ config, file, loaded: true })
    }
    if (configured._tag === "Some") {
      return yield* new ConfigFileError({
        file,
        reason: "Environment",
        message: "MYCLAW_CONFIG names a file that does not exist"
      })
    }
    if (!options.writeExample) return MyclawConfig.of({ config: AppConfig.make({}), file, loaded: false })
    const example = NodePath.join(workspace.root, "myclaw.example.json")
    if (!(yield* fs.exists(example).pipe(Effect.orElseSucceed(() => false)))) {
      yield* fs.writeFileString(example, JSON.stringify(exampleConfig, null, 2) + "\n", { mode: OWNER_FILE }).pipe(
        Effect.ignoreLogged
      )
      yield* fs.writeFileString(
        NodePath.join(workspace.root, "example-script.json"),
        JSON.stringify(exampleScript, null, 2) + "\n",
        { mode: OWNER_FILE }
      )
        .pipe(Effect.ignoreLogged)
    }
    yield* Effect.logWarning(
      `no configuration file at ${file}: no LLM provider is configured. ` +
        `Copy ${example} to ${file} and edit its "tiers" to configure one.`
    )
    return MyclawConfig.of({ config: AppConfig.make({}), file, loaded: false })
  })

export const MyclawConfigLive = Layer.effect(MyclawConfig, makeMyclawConfig({ writeExample: true }))

/** The configuration for read-only commands: the same file, and nothing written when it is missing. */
export const MyclawConfigReadOnly = Layer.effect(MyclawConfig, makeMyclawConfig({ writeExample: false }))

/** A fixed configuration, for tests and embedding. */
export const MyclawConfigFixed = (config: AppConfig, file = "<inline>") =>
  Layer.succeed(MyclawConfig, MyclawConfig.of({ config, file, loaded: true }))
