import { Cause, Effect, Either, Layer } from "effect"
import { ToolExecutionError } from "../../domain/Errors.js"
import type { LlmToolSpec } from "../../domain/LlmTypes.js"
import { cutAt } from "../../domain/Text.js"
import { type PreparedCall, rejectionOf, type Tool, type ToolFailure, type ToolOutput } from "../../domain/Tool.js"
import type { ToolCall, ToolResult } from "../../domain/ToolCall.js"
import { describeParseError, describeSchema, nearest, parametersJsonSchema } from "../../domain/ToolValidation.js"
import { promiseTimeoutFail, timeoutFail } from "../../programs/Timeout.js"
import { MyclawConfig } from "../../services/MyclawConfig.js"
import { Secrets } from "../../services/Secrets.js"
import { ToolRegistry, type Validated } from "../../services/ToolRegistry.js"
import { makeFsTools } from "./FsTools.js"
import { makeMemoryNoteTool } from "./MemoryNoteTool.js"
import { makeNowTool } from "./NowTool.js"
import { makeShellRunTool } from "./ShellRunTool.js"
import { makeWebFetchTool } from "./WebFetchTool.js"

const RETRY_HINT = "Retry with the correct fields, or choose another tool."

/** A registry over the given tools; the tool timeout comes from the configuration. */
export const makeToolRegistry = (tools: ReadonlyArray<Tool>) =>
  Effect.gen(function*() {
    const { config } = yield* MyclawConfig
    const secrets = yield* Secrets
    const toolMs = config.timeouts.toolMs
    const byName = new Map(tools.map((tool) => [tool.name, tool]))
    if (byName.size !== tools.length) return yield* Effect.dieMessage("two tools share a name")
    const catalog: ReadonlyArray<LlmToolSpec> = tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      parameters: tool.jsonSchema ?? parametersJsonSchema(tool.parameters)
    }))
    const expected = new Map(catalog.map((spec) => [spec.name, describeSchema(spec.parameters)]))
    const names = tools.map((tool) => tool.name)

    const unknownTool = (call: ToolCall): Validated => {
      const near = nearest(call.name, names)
      return {
        _tag: "Invalid",
        call,
        validation: "unknown_tool",
        message: [
          "The tool call is not valid.",
          `- Requested tool: ${JSON.stringify(call.name)} (not in the catalog)`,
          ...(near === undefined ? [] : [`- Nearest tool name: ${JSON.stringify(near)}`]),
          `- Available tools: ${names.map((name) => JSON.stringify(name)).join(", ")}`,
          "Retry with a tool from the catalog."
        ].join("\n")
      }
    }

    const schemaError = (call: ToolCall, problems: ReadonlyArray<string>): Validated => ({
      _tag: "Invalid",
      call,
      validation: "schema_error",
      message: [
        "The tool call is not valid.",
        `- Requested tool: ${JSON.stringify(call.name)} (exists in the catalog)`,
        ...problems,
        `- Expected schema: ${expected.get(call.name)}`,
        RETRY_HINT
      ].join("\n")
    })

    const validate = (call: ToolCall): Validated => {
      const tool = byName.get(call.name)
      if (tool === undefined) return unknownTool(call)
      if (call.raw_arguments !== undefined) {
        const excerpt = call.raw_arguments.length > 80 ? `${cutAt(call.raw_arguments, 77)}...` : call.raw_arguments
        return schemaError(call, [`- Arguments: not valid JSON: ${JSON.stringify(excerpt)}`])
      }
      const prepared = tool.prepare(call.args)
      return Either.isRight(prepared)
        ? { _tag: "Valid", call, tool, prepared: prepared.right }
        : schemaError(call, describeParseError(prepared.left, call.args))
    }

    // Limited by the tool timeout: an effect in a fiber of its own (interrupted past the limit), an async
    // function's promise by a timer alone (its signal aborted past the limit); a rejection is the tool's failure.
    const limited = (prepared: PreparedCall, tool: Tool): Effect.Effect<ToolOutput, ToolFailure> => {
      const timedOut = () => new ToolExecutionError({ tool: tool.name, message: `timed out after ${toolMs} ms` })
      return prepared.run === undefined
        ? timeoutFail(prepared.execute, toolMs, timedOut)
        : promiseTimeoutFail(prepared.run, rejectionOf(tool.name), toolMs, timedOut)
    }

    // Every result and error passes the redaction before the turn sees it: a secret a tool resolved and echoed
    // reaches neither the model nor the trace, the logs or the audit log.
    // One handler for every outcome (a result, a failure, a crash, an interruption): it runs for every tool call.
    const execute = (prepared: PreparedCall, tool: Tool): Effect.Effect<ToolResult> =>
      Effect.matchCauseEffect(
        limited(prepared, tool),
        {
          onSuccess: (output) =>
            Effect.succeed<ToolResult>(
              // Without a source or a note, a literal of its two fields: one with spreads has room for four, and
              // every step of an open conversation holds its result.
              output.source === undefined && output.note === undefined
                ? { status: output.status, content: secrets.redact(output.content) }
                : {
                  status: output.status,
                  content: secrets.redact(output.content),
                  ...(output.source === undefined ? {} : { source: secrets.redact(output.source) }),
                  ...(output.note === undefined ? {} : { note: secrets.redact(output.note) })
                }
            ),
          onFailure: (cause): Effect.Effect<ToolResult> => {
            const failed = Cause.failureOrCause(cause)
            if (Either.isLeft(failed)) {
              return Effect.succeed({ status: "failed", content: secrets.redact(failed.left.message) })
            }
            if (Cause.isInterruptedOnly(cause)) return Effect.failCause(Cause.stripFailures(cause))
            const crash = secrets.redact(String(Cause.squash(cause)))
            return Effect.as(
              Effect.logError(`tool ${tool.name} crashed: ${secrets.redact(Cause.pretty(cause))}`),
              { status: "failed", content: `the tool ${tool.name} crashed: ${crash}` } satisfies ToolResult
            )
          }
        }
      )

    return ToolRegistry.of({ tools, catalog, find: (name) => byName.get(name), validate, execute })
  })

/** A registry of the given tools: how an embedding program (or the benchmark) adds its own. */
export const ToolRegistryFrom = (tools: ReadonlyArray<Tool>) => Layer.effect(ToolRegistry, makeToolRegistry(tools))

/**
 * The built-in tools: fs_read, fs_list, fs_write (confined to the workspace), now and memory_note; web_fetch
 * and shell_run when the configuration turns them on (`"tools": { "web": true, "shell": true }`).
 */
export const builtinTools = Effect.gen(function*() {
  const { config } = yield* MyclawConfig
  const fsTools = yield* makeFsTools
  const memoryNote = yield* makeMemoryNoteTool
  const web = config.tools.web ? [makeWebFetchTool(config.web)] : []
  const shell = config.tools.shell ? [yield* makeShellRunTool(config.shell)] : []
  return [...fsTools, makeNowTool(config.budget.timeZone), memoryNote, ...web, ...shell] satisfies ReadonlyArray<Tool>
})

/** The built-in tools plus `extra`. */
export const ToolRegistryWith = (extra: ReadonlyArray<Tool>) =>
  Layer.effect(ToolRegistry, Effect.flatMap(builtinTools, (builtins) => makeToolRegistry([...builtins, ...extra])))

export const ToolRegistryLive = ToolRegistryWith([])
