#!/usr/bin/env node
import { NodeRuntime } from "@effect/platform-node"
import { Cause, Config, ConfigError, Console, Effect, Either, Exit, Layer, Logger, LogLevel } from "effect"
import { chat } from "../channels/cli/Chat.js"
import { TerminalAnswering, TerminalApprovals } from "../channels/cli/TerminalApprovals.js"
import { TelegramLive } from "../channels/telegram/Live.js"
import { HttpLive } from "../http/Server.js"
import { AuditLogExisting } from "../layers/audit/AuditLogFile.js"
import {
  BaseLayer,
  ExistingWorkspaceLayer,
  MainLayer,
  ReadOnlyBaseLayer,
  SecretsAdminLayer,
  SecretsReadLayer,
  SessionsCommandLayer,
  StateLayer,
  StateReadOnlyLayer
} from "../layers/Main.js"
import { TelemetryLive } from "../layers/Telemetry.js"
import { BackupScheduleLive } from "../programs/BackupSchedule.js"
import { DigestScheduleLive } from "../programs/Digest.js"
import { version } from "../Version.js"
import { Command, parseArgs, usage } from "./Args.js"
import { auditQuery, auditResume, auditVerify } from "./Audit.js"
import { backupCommand } from "./Backup.js"
import { budgetOverride, budgetShow } from "./BudgetCommand.js"
import { digestCommand } from "./Digest.js"
import { doctor } from "./Doctor.js"
import { replayCli } from "./ReplayCli.js"
import { secretsList, secretsRm, secretsSet } from "./Secrets.js"
import { sessionsForget, sessionsList, sessionsShow } from "./SessionsCommand.js"

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
    Layer.merge(
      Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger)),
      Logger.minimumLogLevel(level)
    ))
)

/** The service logs JSON lines on stdout. */
const jsonLogs = Layer.unwrapEffect(
  Effect.map(logLevel, (level) => Layer.merge(Logger.json, Logger.minimumLogLevel(level)))
)

/** The audit log alone, read-only: verify and query create nothing and start no budget. */
const AuditLayer = AuditLogExisting.pipe(Layer.provideMerge(ReadOnlyBaseLayer))

/** The HTTP server, with the Telegram channel (on with TELEGRAM_BOT_TOKEN; its webhook route when configured). */
const HttpWithTelegram = HttpLive.pipe(Layer.provide(TelegramLive))

const run = (argv: ReadonlyArray<string>): Effect.Effect<number> =>
  Effect.gen(function*() {
    const replaying = replayCli(argv, stderrLogs)
    if (replaying !== undefined) return yield* replaying
    const command = yield* parseArgs(argv)
    return yield* Command.$match(command, {
      Help: () => Effect.as(Console.log(usage), 0),
      Version: () => Effect.as(Console.log(`myclaw ${version}`), 0),
      Chat: (options) =>
        Effect.as(
          chat(options).pipe(
            Effect.provide(TerminalApprovals.pipe(Layer.provideMerge(MainLayer))),
            Effect.provide(stderrLogs)
          ),
          0
        ),
      Doctor: () => doctor.pipe(Effect.provide(BaseLayer), Effect.provide(stderrLogs)),
      Budget: () =>
        budgetShow.pipe(
          Effect.provide(StateReadOnlyLayer.pipe(Layer.provideMerge(ReadOnlyBaseLayer))),
          Effect.provide(stderrLogs)
        ),
      BudgetOverride: (options) =>
        budgetOverride(options).pipe(
          Effect.provide(StateLayer.pipe(Layer.provideMerge(BaseLayer))),
          Effect.provide(stderrLogs)
        ),
      SessionsList: () => sessionsList.pipe(Effect.provide(SessionsCommandLayer), Effect.provide(stderrLogs)),
      SessionsShow: ({ id }) => sessionsShow(id).pipe(Effect.provide(SessionsCommandLayer), Effect.provide(stderrLogs)),
      SessionsForget: ({ id }) =>
        sessionsForget(id).pipe(Effect.provide(SessionsCommandLayer), Effect.provide(stderrLogs)),
      AuditVerify: (options) => auditVerify(options).pipe(Effect.provide(AuditLayer), Effect.provide(stderrLogs)),
      AuditResume: (options) => auditResume(options).pipe(Effect.provide(AuditLayer), Effect.provide(stderrLogs)),
      AuditQuery: (options) => auditQuery(options).pipe(Effect.provide(AuditLayer), Effect.provide(stderrLogs)),
      SecretsSet: (options) => secretsSet(options).pipe(Effect.provide(SecretsAdminLayer), Effect.provide(stderrLogs)),
      SecretsList: () => secretsList.pipe(Effect.provide(SecretsReadLayer), Effect.provide(stderrLogs)),
      SecretsRm: (options) => secretsRm(options).pipe(Effect.provide(SecretsAdminLayer), Effect.provide(stderrLogs)),
      Backup: (options) => backupCommand(options).pipe(Effect.provide(BaseLayer), Effect.provide(stderrLogs)),
      Digest: (options) =>
        Effect.as(
          digestCommand(options).pipe(Effect.provide(ExistingWorkspaceLayer), Effect.provide(stderrLogs)),
          0
        ),
      Serve: () =>
        Layer.launch(
          Layer.mergeAll(HttpWithTelegram, DigestScheduleLive, BackupScheduleLive, TerminalAnswering).pipe(
            Layer.provide(MainLayer)
          )
        )
          .pipe(
            Effect.provide(TelemetryLive),
            Effect.provide(jsonLogs),
            Effect.as(0)
          )
    })
  }).pipe(
    Effect.catchTags({
      UsageError: (error) => Effect.as(Console.error(`myclaw: ${error.message}\n\n${usage}`), 2),
      ConfigFileError: (error) => Effect.as(Console.error(`myclaw: ${error.file}: ${error.message}`), 1),
      WorkspaceError: (error) => Effect.as(Console.error(`myclaw: workspace ${error.path}: ${error.message}`), 1),
      TraceStoreError: (error) => Effect.as(Console.error(`myclaw: trace store ${error.path}: ${error.message}`), 1),
      AuditError: (error) => Effect.as(Console.error(`myclaw: audit log ${error.path}: ${error.message}`), 1),
      HttpListenError: (error) => Effect.as(Console.error(`myclaw: ${error.message}`), 1),
      BudgetStoreError: (error) => Effect.as(Console.error(`myclaw: budget ${error.path}: ${error.message}`), 1),
      SessionError: (error) => Effect.as(Console.error(`myclaw: session ${error.sessionId}: ${error.message}`), 1),
      SecretError: (error) => Effect.as(Console.error(`myclaw: secrets: ${error.message}`), 1)
    }),
    Effect.catchAll((error) => Effect.as(Console.error(`myclaw: ${String(error)}`), 1))
  )

/** SIGINT/SIGTERM interrupt the main fiber: a clean stop (a turn in flight is persisted as user_aborted). */
NodeRuntime.runMain(run(process.argv.slice(2)), {
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
