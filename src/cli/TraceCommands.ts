import { Console, Data, Effect, Either } from "effect"
import * as NodePath from "node:path"
import { exportTrace } from "../domain/TraceFile.js"
import { renderListing, renderTimeline } from "../domain/TraceTimeline.js"
import { findTrace, listTraces } from "../layers/traces/TraceIndex.js"
import { Workspace } from "../services/Workspace.js"
import { UsageError } from "./Args.js"
import { parseAuditTime } from "./AuditArgs.js"
import { printForPeople } from "./Output.js"

export type TraceCommand = Data.TaggedEnum<{
  TraceList: {
    readonly session: string | undefined
    readonly since: number | undefined
    readonly limit: number
    readonly json: boolean
  }
  TraceShow: { readonly id: string; readonly json: boolean }
  TraceExport: { readonly id: string }
}>
export const TraceCommand = Data.taggedEnum<TraceCommand>()

const fail = (message: string) => Either.left(new UsageError({ message }))

/** `trace list|show|export ...`; Left names what is wrong. */
export const parseTraceArgs = (args: ReadonlyArray<string>): Either.Either<TraceCommand, UsageError> => {
  const [sub, ...rest] = args
  const json = rest.includes("--json")
  const words = rest.filter((arg) => arg !== "--json")
  if (sub === "show" || sub === "export") {
    if (words.length !== 1 || words[0]!.startsWith("--")) return fail(`trace ${sub} takes one trace id`)
    if (sub === "export" && json) return fail("trace export always writes JSON; it takes no --json")
    return Either.right(
      sub === "show" ? TraceCommand.TraceShow({ id: words[0]!, json }) : TraceCommand.TraceExport({ id: words[0]! })
    )
  }
  if (sub !== "list") return fail(`trace: expected list, show or export, got ${JSON.stringify(sub ?? "")}`)
  const options: Record<string, string> = {}
  for (let i = 0; i < words.length; i++) {
    const arg = words[i]!
    const [name, inline] = arg.startsWith("--") ? arg.slice(2).split(/=(.*)/s, 2) : [undefined, undefined]
    if (name === undefined || !["session", "since", "limit"].includes(name)) {
      return fail(`trace list: unexpected ${JSON.stringify(arg)}`)
    }
    const value = inline ?? words[++i]
    if (value === undefined || value.startsWith("--")) return fail(`trace list: --${name} needs a value`)
    options[name] = value
  }
  const limit = options.limit === undefined ? 50 : Number(options.limit)
  if (!Number.isInteger(limit) || limit <= 0) {
    return fail(`trace list: --limit must be a positive integer, got ${options.limit}`)
  }
  let since: number | undefined
  if (options.since !== undefined) {
    const parsed = parseAuditTime(options.since, "since")
    if (Either.isLeft(parsed)) return fail(`trace list: ${parsed.left}`)
    since = parsed.right
  }
  return Either.right(TraceCommand.TraceList({ session: options.session, since, limit, json }))
}

/** Where the trace store keeps its monthly files. */
export const tracesDir = Effect.map(Workspace, (workspace) => NodePath.join(workspace.root, ".audit", "traces"))

const notFound = (id: string) =>
  Effect.as(Console.error(`myclaw: no trace ${JSON.stringify(id)} (see myclaw trace list)`), 1)

export const runTraceCommand = (command: TraceCommand) =>
  Effect.gen(function*() {
    const dir = yield* tracesDir
    return yield* TraceCommand.$match(command, {
      TraceList: (options) =>
        Effect.gen(function*() {
          const listed = yield* listTraces(dir, {
            sessionId: options.session,
            since: options.since,
            limit: options.limit
          })
          if (options.json) yield* Console.log(JSON.stringify(listed.traces))
          else yield* printForPeople(renderListing(listed.traces))
          if (listed.skipped > 0) {
            yield* Console.error(`note: ${listed.skipped} lines of the trace files are not traces`)
          }
          return 0
        }),
      TraceShow: ({ id, json }) =>
        Effect.flatMap(findTrace(dir, id), (trace) =>
          trace === undefined
            ? notFound(id)
            : Effect.as(json ? Console.log(exportTrace(trace).trimEnd()) : printForPeople(renderTimeline(trace)), 0)),
      TraceExport: ({ id }) =>
        Effect.flatMap(
          findTrace(dir, id),
          (trace) => trace === undefined ? notFound(id) : Effect.as(Console.log(exportTrace(trace).trimEnd()), 0)
        )
    })
  })
