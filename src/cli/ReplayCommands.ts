import { Console, Data, Effect, Either } from "effect"
import * as NodePath from "node:path"
import { renderReport } from "../domain/Divergence.js"
import type { ExecutionTrace } from "../domain/ExecutionTrace.js"
import { liveTotals, renderLive } from "../domain/LiveComparison.js"
import { checkReplayable, describeTraceFileError } from "../domain/TraceFile.js"
import { renderTimeline } from "../domain/TraceTimeline.js"
import { LlmLive } from "../layers/llm/LlmLive.js"
import { loadConfigFile, MyclawConfigFixed } from "../layers/MyclawConfigLive.js"
import { ToolRegistryLive } from "../layers/tools/ToolRegistryLive.js"
import type { ToolReplayOptions } from "../layers/tools/ToolRegistryReplay.js"
import { findTrace } from "../layers/traces/TraceIndex.js"
import { evalFolder, loadFolder, loadTraceFile, renderEval } from "../programs/replay/Eval.js"
import { liveEval } from "../programs/replay/LiveEval.js"
import { replayTrace } from "../programs/replay/Replay.js"
import type { Workspace } from "../services/Workspace.js"
import { UsageError } from "./Args.js"
import { printForPeople } from "./Output.js"
import { tracesDir } from "./TraceCommands.js"

export type ReplayCommand = Data.TaggedEnum<{
  Replay: {
    readonly source: { readonly _tag: "File"; readonly file: string } | { readonly _tag: "Trace"; readonly id: string }
    readonly json: boolean
    readonly timeline: boolean
    readonly tools: ToolReplayOptions
  }
  Eval: {
    readonly dir: string
    readonly json: boolean
    readonly tools: ToolReplayOptions
    /** Send each recorded message to a live model instead of replaying its answers. */
    readonly live: boolean
    /** Another configuration (provider set) for a live eval. */
    readonly config: string | undefined
  }
}>
export const ReplayCommand = Data.taggedEnum<ReplayCommand>()

const fail = (message: string) => Either.left(new UsageError({ message }))

const flags = (args: ReadonlyArray<string>, known: ReadonlyArray<string>) => {
  const set = new Set(args.filter((arg) => known.includes(arg)))
  return { set, rest: args.filter((arg) => !known.includes(arg)) }
}

const toolsOf = (set: ReadonlySet<string>): ToolReplayOptions => ({
  sideEffects: set.has("--dry-run-tools") ? "dry-run" : "recorded",
  readOnly: set.has("--live-readonly") ? "live" : "recorded"
})

/** `replay FILE|--trace ID [--json] [--timeline] [--dry-run-tools] [--live-readonly]`. */
export const parseReplayArgs = (args: ReadonlyArray<string>): Either.Either<ReplayCommand, UsageError> => {
  const { rest, set } = flags(args, ["--json", "--timeline", "--dry-run-tools", "--live-readonly"])
  const tools = toolsOf(set)
  const json = set.has("--json")
  const timeline = set.has("--timeline")
  if (rest[0] === "--trace" || rest[0]?.startsWith("--trace=")) {
    const id = rest[0] === "--trace" ? rest[1] : rest[0].slice("--trace=".length)
    const extra = rest.slice(rest[0] === "--trace" ? 2 : 1)
    if (id === undefined || id === "" || id.startsWith("--")) return fail("replay --trace needs a trace id")
    if (extra.length > 0) return fail(`replay: unexpected ${JSON.stringify(extra[0])}`)
    return Either.right(ReplayCommand.Replay({ source: { _tag: "Trace", id }, json, timeline, tools }))
  }
  if (rest.length !== 1 || rest[0]!.startsWith("--")) {
    return fail(`replay takes one trace file or --trace ID${rest.length > 0 ? `, got ${rest.join(" ")}` : ""}`)
  }
  return Either.right(ReplayCommand.Replay({ source: { _tag: "File", file: rest[0]! }, json, timeline, tools }))
}

/** `eval DIR [--json] [--dry-run-tools] [--live-readonly]` or `eval DIR --live [--config FILE] [--json]`. */
export const parseEvalArgs = (args: ReadonlyArray<string>): Either.Either<ReplayCommand, UsageError> => {
  const { rest: words, set } = flags(args, ["--json", "--dry-run-tools", "--live-readonly", "--live"])
  let config: string | undefined
  const rest: Array<string> = []
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!
    if (word === "--config" || word.startsWith("--config=")) {
      config = word === "--config" ? words[++i] : word.slice("--config=".length)
      if (config === undefined || config === "" || config.startsWith("--")) return fail("eval --config needs a file")
    } else rest.push(word)
  }
  if (rest.length !== 1 || rest[0]!.startsWith("--")) {
    return fail(`eval takes one folder of trace files${rest.length > 0 ? `, got ${rest.join(" ")}` : ""}`)
  }
  const live = set.has("--live")
  if (config !== undefined && !live) return fail("eval --config is for a live eval: add --live")
  if (live && (set.has("--dry-run-tools") || set.has("--live-readonly"))) {
    return fail("eval --live serves recorded results and dry-runs new side effects; it takes no tool options")
  }
  return Either.right(ReplayCommand.Eval({ dir: rest[0]!, json: set.has("--json"), tools: toolsOf(set), live, config }))
}

/** The recorded trace a replay starts from: a file, or a trace of the store by id. */
const recordedOf = (
  source: Extract<ReplayCommand, { _tag: "Replay" }>["source"]
): Effect.Effect<ExecutionTrace, string, Workspace> =>
  source._tag === "File"
    ? Effect.mapError(loadTraceFile(source.file), describeTraceFileError)
    : Effect.flatMap(tracesDir, (dir) =>
      findTrace(dir, source.id).pipe(
        Effect.mapError((error) => `trace store ${error.path}: ${error.message}`),
        Effect.flatMap((trace) =>
          trace === undefined
            ? Effect.fail(`no trace ${JSON.stringify(source.id)} (see myclaw trace list)`)
            : Effect.mapError(checkReplayable(trace, `trace ${source.id}`), describeTraceFileError)
        )
      ))

/**
 * Runs replay and eval over the owner's configuration and workspace (read, never written: traces, audit and
 * budget of a replay stay in memory). Exit 0 only when every turn replays identically; 1 when one diverges;
 * 2 when a trace cannot be read.
 */
export const runReplayCommand = (command: ReplayCommand) =>
  ReplayCommand.$match(command, {
    Replay: ({ json, source, timeline, tools }) =>
      Effect.gen(function*() {
        const loaded = yield* Effect.either(recordedOf(source))
        if (Either.isLeft(loaded)) {
          yield* Console.error(`myclaw: ${loaded.left}`)
          return 2
        }
        const { replayed, report } = yield* replayTrace(loaded.right, {
          ...tools,
          tools: ToolRegistryLive,
          file: source._tag === "File" ? source.file : undefined
        })
        if (json) yield* Console.log(JSON.stringify(report))
        else {
          if (timeline) yield* printForPeople(renderTimeline(replayed))
          yield* printForPeople(renderReport(report))
        }
        return report.identical ? 0 : 1
      }),
    Eval: ({ config, dir, json, live, tools }) =>
      live ? liveEvalCommand(dir, json, config) : Effect.gen(function*() {
        const result = yield* Effect.either(evalFolder(dir, { ...tools, tools: ToolRegistryLive }))
        if (Either.isLeft(result)) {
          yield* Console.error(`myclaw: ${describeTraceFileError(result.left)}`)
          return 2
        }
        const { rows, totals } = result.right
        if (json) yield* Console.log(JSON.stringify({ rows, totals }))
        else yield* printForPeople(renderEval(result.right, NodePath.resolve(dir)))
        return totals.identical === rows.length ? 0 : 1
      })
  })

/** `eval DIR --live [--config FILE]`: exit 0 when every turn has the same outcome and tool calls, 1 otherwise. */
const liveEvalCommand = (dir: string, json: boolean, configFile: string | undefined) =>
  Effect.gen(function*() {
    const traces = yield* Effect.either(loadFolder(dir))
    if (Either.isLeft(traces)) {
      yield* Console.error(`myclaw: ${describeTraceFileError(traces.left)}`)
      return 2
    }
    const run = liveEval(traces.right, { llm: LlmLive, tools: ToolRegistryLive })
    const rows = yield* (configFile === undefined
      ? run
      : Effect.flatMap(loadConfigFile(NodePath.resolve(configFile)), (config) =>
        Effect.provide(run, MyclawConfigFixed(config, NodePath.resolve(configFile)))))
    const reports = rows.flatMap((row) => (row.report === null ? [] : [row.report]))
    const base = NodePath.resolve(dir)
    if (json) {
      yield* Console.log(JSON.stringify({ rows, totals: liveTotals(reports) }))
    } else {
      yield* printForPeople(renderLive(reports, (report) =>
        NodePath.relative(base, report.file ?? "") || report.trace_id))
      for (const row of rows) {
        if (row.report === null) {
          yield* printForPeople(`${NodePath.relative(base, row.file)}: ${row.error}`)
        }
      }
    }
    const same = reports.every((report) =>
      report.same_outcome && report.departs_at === null
    )
    return same && reports.length === rows.length ? 0 : 1
  })
