import { NodeRuntime } from "@effect/platform-node"
import { Cause, Config, ConfigError, Console, Effect, Either, Exit, Layer, Logger, LogLevel } from "effect"
import * as Compose from "../layers/Compose.js"
import { version } from "../Version.js"
import { Command, parseArgs, usage } from "./Args.js"

const levels: Record<string, LogLevel.LogLevel> = {
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warn: LogLevel.Warning,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  none: LogLevel.None
}

/** MYCLAW_LOG_LEVEL: trace, debug, info (default), warn, error or none, in any case. */
const logLevel = Config.string("MYCLAW_LOG_LEVEL").pipe(
  Config.mapOrFail((text) => {
    const level = levels[text.toLowerCase()]
    return level === undefined
      ? Either.left(ConfigError.InvalidData([], `expected one of ${Object.keys(levels).join(", ")}, got ${text}`))
      : Either.right(level)
  }),
  Config.withDefault(LogLevel.Info)
)

/** Logs of one-shot commands go to stderr, so that stdout carries only the answer or the JSON trace. */
const stderrLogs = Layer.unwrapEffect(
  Effect.map(logLevel, (level) =>
    Compose.merge(
      Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger)),
      Logger.minimumLogLevel(level)
    ))
)

/** The service logs JSON lines on stdout. */
const jsonLogs = Layer.unwrapEffect(
  Effect.map(logLevel, (level) => Compose.merge(Logger.json, Logger.minimumLogLevel(level)))
)

/**
 * A command's code, loaded when that command runs: each command starts with only the modules it needs (the built
 * CLI is a bundle split per dynamic import), so `--help` never loads the HTTP server, SQLite or the agent runtime.
 */
const load = <A>(module: () => Promise<A>): Effect.Effect<A> => Effect.promise(module)

/** The audit log alone, read-only: verify and query create nothing and start no budget. */
const auditLayer = Effect.gen(function*() {
  const { AuditLogExisting } = yield* load(() => import("../layers/audit/AuditLogFile.js"))
  const { FilesReadOnlyBaseLayer } = yield* load(() => import("../layers/Base.js"))
  return AuditLogExisting.pipe(Compose.provideMerge(FilesReadOnlyBaseLayer))
})

const audit = <A, E, R>(command: (module: typeof import("./Audit.js")) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const module = yield* load(() => import("./Audit.js"))
    const layer = yield* auditLayer
    return yield* command(module).pipe(Effect.provide(layer), Effect.provide(stderrLogs))
  })

const secrets = <A, E, R>(
  command: (
    module: typeof import("./Secrets.js"),
    layers: typeof import("../layers/SecretsCommands.js")
  ) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const module = yield* load(() => import("./Secrets.js"))
    const layers = yield* load(() => import("../layers/SecretsCommands.js"))
    return yield* command(module, layers).pipe(Effect.provide(stderrLogs))
  })

const sessions = <A, E, R>(command: (module: typeof import("./SessionsCommand.js")) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const module = yield* load(() => import("./SessionsCommand.js"))
    const { SessionsCommandLayer } = yield* load(() => import("../layers/SessionsCommands.js"))
    return yield* command(module).pipe(Effect.provide(SessionsCommandLayer), Effect.provide(stderrLogs))
  })

const run = (argv: ReadonlyArray<string>): Effect.Effect<number> =>
  Effect.gen(function*() {
    if (argv[0] === "trace" || argv[0] === "replay" || argv[0] === "eval") {
      const { replayCli } = yield* load(() => import("./ReplayCli.js"))
      const replaying = replayCli(argv, stderrLogs)
      if (replaying !== undefined) return yield* replaying
    }
    const command = yield* parseArgs(argv)
    return yield* Command.$match(command, {
      Help: () => Effect.as(Console.log(usage), 0),
      Version: () => Effect.as(Console.log(`myclaw ${version}`), 0),
      Chat: (options) =>
        Effect.gen(function*() {
          const { chat } = yield* load(() => import("../channels/cli/Chat.js"))
          const { TerminalApprovals } = yield* load(() => import("../channels/cli/TerminalApprovals.js"))
          const { MainLayer } = yield* load(() => import("../layers/Main.js"))
          return yield* Effect.as(
            chat(options).pipe(
              Effect.provide(TerminalApprovals.pipe(Compose.provideMerge(MainLayer))),
              Effect.provide(stderrLogs)
            ),
            0
          )
        }),
      Doctor: () =>
        Effect.gen(function*() {
          const { doctor } = yield* load(() => import("./Doctor.js"))
          const { FilesBaseLayer } = yield* load(() => import("../layers/Base.js"))
          return yield* doctor.pipe(Effect.provide(FilesBaseLayer), Effect.provide(stderrLogs))
        }),
      Budget: () =>
        Effect.gen(function*() {
          const { budgetShow } = yield* load(() => import("./BudgetCommand.js"))
          const { BudgetShowLayer } = yield* load(() => import("../layers/BudgetShow.js"))
          return yield* budgetShow.pipe(
            Effect.provide(BudgetShowLayer),
            Effect.provide(stderrLogs)
          )
        }),
      BudgetOverride: (options) =>
        Effect.gen(function*() {
          const { budgetOverride } = yield* load(() => import("./BudgetCommand.js"))
          const { FilesBaseLayer } = yield* load(() => import("../layers/Base.js"))
          const { StateLayer } = yield* load(() => import("../layers/State.js"))
          return yield* budgetOverride(options).pipe(
            Effect.provide(StateLayer.pipe(Compose.provideMerge(FilesBaseLayer))),
            Effect.provide(stderrLogs)
          )
        }),
      AuditVerify: (options) => audit((module) => module.auditVerify(options)),
      AuditResume: (options) => audit((module) => module.auditResume(options)),
      AuditQuery: (options) => audit((module) => module.auditQuery(options)),
      SecretsSet: (options) =>
        secrets((module, layers) => module.secretsSet(options).pipe(Effect.provide(layers.SecretsAdminLayer))),
      SecretsList: () => secrets((module, layers) => module.secretsList.pipe(Effect.provide(layers.SecretsReadLayer))),
      SecretsRm: (options) =>
        secrets((module, layers) => module.secretsRm(options).pipe(Effect.provide(layers.SecretsAdminLayer))),
      Plans: (options) =>
        Effect.gen(function*() {
          const { plansCommand } = yield* load(() => import("./Plans.js"))
          const { PlanCacheSqlite } = yield* load(() => import("../layers/plans/PlanCacheSqlite.js"))
          const { FilesBaseLayer } = yield* load(() => import("../layers/Base.js"))
          return yield* plansCommand(options).pipe(
            Effect.provide(PlanCacheSqlite.pipe(Compose.provideMerge(FilesBaseLayer))),
            Effect.provide(stderrLogs)
          )
        }),
      SessionsList: () => sessions((module) => module.sessionsList),
      SessionsShow: ({ id }) => sessions((module) => module.sessionsShow(id)),
      SessionsForget: ({ id }) => sessions((module) => module.sessionsForget(id)),
      Backup: (options) =>
        Effect.gen(function*() {
          const { backupCommand } = yield* load(() => import("./Backup.js"))
          const { FilesBaseLayer } = yield* load(() => import("../layers/Base.js"))
          return yield* backupCommand(options).pipe(Effect.provide(FilesBaseLayer), Effect.provide(stderrLogs))
        }),
      Digest: (options) =>
        Effect.gen(function*() {
          const { digestCommand } = yield* load(() => import("./Digest.js"))
          const { ExistingWorkspaceLayer } = yield* load(() => import("../layers/Main.js"))
          return yield* Effect.as(
            digestCommand(options).pipe(Effect.provide(ExistingWorkspaceLayer), Effect.provide(stderrLogs)),
            0
          )
        }),
      Serve: () =>
        Effect.gen(function*() {
          const { serve } = yield* load(() => import("./Serve.js"))
          return yield* serve.pipe(Effect.provide(jsonLogs), Effect.as(0))
        })
    })
  }).pipe(
    Effect.catchTags({
      UsageError: (error) => Effect.as(Console.error(`myclaw: ${error.message}\n\n${usage}`), 2),
      ConfigFileError: (error) => Effect.as(Console.error(`myclaw: ${error.file}: ${error.message}`), 1),
      WorkspaceError: (error) => Effect.as(Console.error(`myclaw: workspace ${error.path}: ${error.message}`), 1),
      TraceStoreError: (error) => Effect.as(Console.error(`myclaw: trace store ${error.path}: ${error.message}`), 1),
      AuditError: (error) => Effect.as(Console.error(`myclaw: audit log ${error.path}: ${error.message}`), 1),
      HttpListenError: (error) => Effect.as(Console.error(`myclaw: ${error.message}`), 1),
      PlanCacheError: (error) => Effect.as(Console.error(`myclaw: plans ${error.path}: ${error.message}`), 1),
      BudgetStoreError: (error) => Effect.as(Console.error(`myclaw: budget ${error.path}: ${error.message}`), 1),
      SessionError: (error) => Effect.as(Console.error(`myclaw: session ${error.sessionId}: ${error.message}`), 1),
      SecretError: (error) => Effect.as(Console.error(`myclaw: secrets: ${error.message}`), 1)
    }),
    Effect.catchAll((error) => Effect.as(Console.error(`myclaw: ${String(error)}`), 1))
  )

/**
 * Runs the command line `argv` to its exit code. SIGINT/SIGTERM interrupt the main fiber: a clean stop (a turn in
 * flight is persisted as user_aborted).
 */
export const main = (argv: ReadonlyArray<string>): void =>
  NodeRuntime.runMain(run(argv), {
    disablePrettyLogger: true,
    teardown: (exit, onExit) =>
      onExit(
        Exit.isSuccess(exit)
          ? (typeof exit.value === "number" ? exit.value : 0)
          : Cause.isInterruptedOnly(exit.cause)
          ? 0
          : 1
      )
  })
