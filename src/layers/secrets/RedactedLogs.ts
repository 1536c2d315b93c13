import { Cause, Effect, FiberRef, HashMap, HashSet, Layer, Logger } from "effect"
import { Secrets } from "../../services/Secrets.js"

const redactValue = (redact: (text: string) => string, value: unknown): unknown =>
  typeof value === "string"
    ? redact(value)
    : Array.isArray(value)
    ? value.map((item) => redactValue(redact, item))
    : value

/**
 * Every logger in force passes its line through the secrets' redaction first: message, annotations and the
 * rendered cause. Whatever logs a value a tool or a server resolved (a crash, a child's stderr) logs the marker.
 */
export const RedactedLogs = Layer.scopedDiscard(
  Effect.flatMap(
    Secrets,
    (secrets) =>
      Effect.locallyScopedWith(
        FiberRef.currentLoggers,
        (loggers) =>
          HashSet.map(loggers, (logger) =>
            Logger.mapInputOptions(logger, (options) => ({
              ...options,
              message: redactValue(secrets.redact, options.message),
              annotations: HashMap.map(options.annotations, (value) => redactValue(secrets.redact, value)),
              cause: Cause.isEmpty(options.cause)
                ? options.cause
                : Cause.fail(secrets.redact(Cause.pretty(options.cause, { renderErrorCause: true })))
            })))
      )
  )
)
