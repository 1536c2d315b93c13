import { Effect, Layer, Logger, LogLevel } from "effect"
import { Metrics } from "../services/Metrics.js"

/**
 * Adds a logger that counts every Error and Fatal line in `Metrics` (what /health reports as
 * `recent_errors_1h`); it writes nothing itself. Provide it to the layers whose fibers should be counted.
 */
export const ErrorCountingLogger = Layer.unwrapEffect(
  Effect.map(Metrics, (metrics) =>
    Logger.add(Logger.make(({ logLevel }) => {
      if (LogLevel.greaterThanEqual(logLevel, LogLevel.Error)) Effect.runSync(metrics.errorObserved)
    })))
)
