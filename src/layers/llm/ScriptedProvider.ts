import { FileSystem } from "@effect/platform"
import { Duration, Effect, ParseResult, Schema } from "effect"
import * as NodePath from "node:path"
import { ConfigFileError, LlmError, llmTimeout, messageOf } from "../../domain/Errors.js"
import { Script, type ScriptEntry } from "../../domain/ScriptEntry.js"
import { toolCallFromWire } from "../../domain/ToolCall.js"
import type { Provider } from "./Provider.js"

/**
 * A provider that serves `entries` in order, one per call, and fails clearly once they run out (or, with
 * `loop`, starts over from the first).
 */
export const makeScriptedProvider = (
  entries: ReadonlyArray<ScriptEntry>,
  model = "scripted",
  name = "scripted",
  loop = false
) =>
  Effect.sync((): Provider => {
    let next = 0
    const generate: Provider["generate"] = (_request, timeoutMs) =>
      Effect.suspend(() => {
        const index = loop && entries.length > 0 ? next++ % entries.length : next++
        const entry = entries[index]
        if (entry === undefined) {
          return Effect.fail(
            new LlmError({
              reason: "BadResponse",
              provider: name,
              message: `the script is exhausted: it has ${entries.length} responses and call ${
                index + 1
              } asked for another`
            })
          )
        }
        const answer = entry.error !== undefined
          ? Effect.fail(
            new LlmError({
              reason: entry.error.reason,
              provider: name,
              message: entry.error.message ?? `scripted ${entry.error.reason} error (response ${index + 1})`
            })
          )
          : Effect.succeed({
            model,
            text: entry.text ?? "",
            toolCalls: (entry.toolCalls ?? []).map((call, i) =>
              toolCallFromWire(call.id ?? `call_${index + 1}_${i + 1}`, call.name, call.args)
            ),
            usage: {
              input: entry.usage?.input ?? 0,
              output: entry.usage?.output ?? 0,
              cached: entry.usage?.cached ?? 0
            },
            finishReason: entry.finishReason ?? ((entry.toolCalls?.length ?? 0) > 0 ? "tool_call" : "stop")
          })
        if (entry.delayMs === undefined) return answer
        return entry.delayMs >= timeoutMs
          ? Effect.zipRight(
            Effect.sleep(Duration.millis(timeoutMs)),
            Effect.fail(llmTimeout(name, timeoutMs))
          )
          : Effect.delay(answer, Duration.millis(entry.delayMs))
      })
    return { name, model, generate, selfTimed: true }
  })

/** Loads a script file (a JSON array of entries); errors name the file and the entry. */
export const loadScript = (file: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(file).pipe(
      Effect.mapError((error) =>
        new ConfigFileError({
          file,
          reason: "Unreadable",
          message: `cannot read the script: ${error.message}`,
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
          message: `the script is not valid JSON: ${messageOf(error)}`,
          cause: error
        })
    })
    return yield* Schema.decodeUnknown(Script, { errors: "all", onExcessProperty: "error" })(json).pipe(
      Effect.mapError((error) =>
        new ConfigFileError({
          file,
          reason: "Invalid",
          message: `invalid script:\n${ParseResult.TreeFormatter.formatErrorSync(error)}`,
          cause: error
        })
      )
    )
  })

export const scriptedProviderFromFile = (script: string, configFile: string, model: string, loop = false) =>
  Effect.flatMap(
    loadScript(NodePath.resolve(NodePath.dirname(configFile), script)),
    (entries) => makeScriptedProvider(entries, model, `scripted:${script}`, loop)
  )
