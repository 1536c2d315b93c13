import { Effect, Either, type Layer } from "effect"
import { BaseLayer } from "../layers/Main.js"
import { parseEvalArgs, parseReplayArgs, runReplayCommand } from "./ReplayCommands.js"
import { parseTraceArgs, runTraceCommand } from "./TraceCommands.js"

/**
 * The trace, replay and eval commands: the program for `argv` when it is one of them (the exit code), undefined
 * otherwise. `logs`: where one-shot commands log.
 */
export const replayCli = <E>(argv: ReadonlyArray<string>, logs: Layer.Layer<never, E>) => {
  const [command, ...rest] = argv
  if (command === "trace") {
    return Either.match(parseTraceArgs(rest), {
      onLeft: (error) => Effect.fail(error),
      onRight: (parsed) => runTraceCommand(parsed).pipe(Effect.provide(BaseLayer), Effect.provide(logs))
    })
  }
  if (command === "replay" || command === "eval") {
    return Either.match(command === "replay" ? parseReplayArgs(rest) : parseEvalArgs(rest), {
      onLeft: (error) => Effect.fail(error),
      onRight: (parsed) => runReplayCommand(parsed).pipe(Effect.provide(BaseLayer), Effect.provide(logs))
    })
  }
  return undefined
}
