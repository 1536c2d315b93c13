import { Clock, Effect, Either } from "effect"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import type { ReplayReport } from "../../domain/Divergence.js"
import { messageOf } from "../../domain/Errors.js"
import type { ExecutionTrace } from "../../domain/ExecutionTrace.js"
import { checkReplayable, describeTraceFileError, parseTraceText, TraceFileError } from "../../domain/TraceFile.js"
import { makeReplayer, type ReplayOptions } from "./Replay.js"

/** Reads a trace file and checks that it can be replayed; every problem names the file and where in it. */
export const loadTraceFile = (file: string) =>
  Effect.tryPromise({
    try: () => NodeFs.readFile(file, "utf8"),
    catch: (error) =>
      new TraceFileError({
        file,
        reason: "Unreadable",
        location: "",
        message: `cannot read: ${messageOf(error)}`,
        cause: error
      })
  }).pipe(
    Effect.flatMap((text) => Either.flatMap(parseTraceText(text, file), (trace) => checkReplayable(trace, file)))
  )

/** One trace file of an eval: its report, or why it could not be replayed. */
export type EvalRow =
  | { readonly file: string; readonly report: ReplayReport; readonly error: null }
  | { readonly file: string; readonly report: null; readonly error: string }

export interface EvalResult {
  readonly rows: ReadonlyArray<EvalRow>
  readonly totals: {
    readonly traces: number
    readonly identical: number
    readonly diverged: number
    readonly invalid: number
    readonly wall_ms: number
  }
}

/** The trace files of a folder (`*.json`), sorted by name. */
export const traceFiles = (dir: string) =>
  Effect.tryPromise({
    try: () => NodeFs.readdir(dir),
    catch: (error) =>
      new TraceFileError({
        file: dir,
        reason: "Unreadable",
        location: "",
        message: `cannot list: ${messageOf(error)}`,
        cause: error
      })
  }).pipe(
    Effect.map((names) => names.filter((name) => name.endsWith(".json")).sort().map((name) => NodePath.join(dir, name)))
  )

/** Replays traces side by side (`concurrency` at a time): a regression suite over recorded turns. */
export const evalTraces = <E>(
  traces: ReadonlyArray<{ readonly file: string; readonly trace: Either.Either<ExecutionTrace, TraceFileError> }>,
  options: ReplayOptions<E>,
  concurrency = 8
) =>
  Effect.scoped(Effect.gen(function*() {
    const replay = yield* makeReplayer(options.tools)
    const started = yield* Clock.currentTimeNanos
    const rows = yield* Effect.forEach(traces, ({ file, trace }) =>
      Either.match(trace, {
        onLeft: (error): Effect.Effect<EvalRow> =>
          Effect.succeed({ file, report: null, error: describeTraceFileError(error) }),
        onRight: (recorded) =>
          replay(recorded, options, file).pipe(
            Effect.map(({ report }): EvalRow => ({ file, report, error: null })),
            Effect.catchAll((error) =>
              Effect.succeed<EvalRow>({ file, report: null, error: `replay failed: ${messageOf(error)}` })
            ),
            Effect.catchAllDefect((defect) =>
              Effect.succeed<EvalRow>({ file, report: null, error: `replay crashed: ${messageOf(defect)}` })
            )
          )
      }), { concurrency })
    const wallMs = Number((yield* Clock.currentTimeNanos) - started) / 1e6
    const identical = rows.filter((row) => row.report?.identical === true).length
    const invalid = rows.filter((row) => row.report === null).length
    return {
      rows,
      totals: {
        traces: rows.length,
        identical,
        diverged: rows.length - identical - invalid,
        invalid,
        wall_ms: wallMs
      }
    } satisfies EvalResult
  }))

/** Every trace file of `dir`, replayed; a file that cannot be read is a row with its error, never a crash. */
export const evalFolder = <E>(dir: string, options: ReplayOptions<E>, concurrency = 8) =>
  Effect.flatMap(loadFolder(dir), (traces) => evalTraces(traces, options, concurrency))

/** The trace files of a folder, each read and checked, or with what is wrong with it. */
export const loadFolder = (dir: string) =>
  Effect.flatMap(
    traceFiles(dir),
    (files) =>
      Effect.forEach(files, (file) => Effect.map(Effect.either(loadTraceFile(file)), (trace) => ({ file, trace })), {
        concurrency: 8
      })
  )

/** The eval as a table: trace, outcome, identical or first divergence, time; then the totals. */
export const renderEval = (result: EvalResult, base: string): string => {
  const name = (file: string) => (NodePath.isAbsolute(file) ? NodePath.relative(base, file) : file) || file
  const width = Math.max(5, ...result.rows.map((row) => name(row.file).length))
  const lines = [`${"trace".padEnd(width)}  ${"outcome".padEnd(18)}  ${"ms".padStart(7)}  result`]
  for (const row of result.rows) {
    if (row.report === null) {
      lines.push(`${name(row.file).padEnd(width)}  ${"-".padEnd(18)}  ${"-".padStart(7)}  INVALID ${row.error}`)
      continue
    }
    const r = row.report
    const d = r.divergence
    const verdict = d === null
      ? "identical"
      : `DIVERGED at ${d.step === null ? "the end" : `step ${d.step}`}: ${d.kind} ${d.what}`
    lines.push(
      `${name(row.file).padEnd(width)}  ${r.outcome.recorded.padEnd(18)}  ${
        r.replay_ms.toFixed(1).padStart(7)
      }  ${verdict}`
    )
  }
  const t = result.totals
  lines.push(
    `${t.traces} traces: ${t.identical} identical, ${t.diverged} diverged, ${t.invalid} invalid ` +
      `(${t.wall_ms.toFixed(0)} ms, ${t.wall_ms > 0 ? ((t.traces * 1000) / t.wall_ms).toFixed(0) : "-"} traces/s)`
  )
  return lines.join("\n")
}
