import { Data, Either } from "effect"

export type Command = Data.TaggedEnum<{
  Chat: { readonly message: string; readonly session: string | undefined; readonly json: boolean }
  Serve: {}
  Doctor: {}
  Help: {}
}>
export const Command = Data.taggedEnum<Command>()

/** A command line myclaw does not understand; the message says what is wrong and how to fix it. */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

export const usage = `Usage:
  myclaw chat "message" [--session ID] [--json]   run one turn and print the answer (or the trace as JSON)
  myclaw serve                                     start the HTTP server (what npm start runs)
  myclaw doctor                                    check the configuration and one completion per provider
  myclaw help                                      this text

Environment: MYCLAW_HOME (workspace, default ./workspace), MYCLAW_CONFIG (default <workspace>/myclaw.json),
MYCLAW_HTTP_HOST (default 127.0.0.1), MYCLAW_HTTP_PORT (default 8787), MYCLAW_LOG_LEVEL (default Info).`

const fail = (message: string) => Either.left(new UsageError({ message }))

const parseChat = (args: ReadonlyArray<string>): Either.Either<Command, UsageError> => {
  let message: string | undefined
  let session: string | undefined
  let json = false
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--json") json = true
    else if (arg === "--session" || arg.startsWith("--session=")) {
      const value = arg === "--session" ? args[++i] : arg.slice("--session=".length)
      if (value === undefined || value === "" || value.startsWith("--")) return fail("--session needs an ID")
      if (!/^[\w.:@-]{1,128}$/.test(value)) {
        return fail(`--session ${JSON.stringify(value)}: use letters, digits and . _ : @ - (at most 128)`)
      }
      session = value
    } else if (arg.startsWith("--")) return fail(`chat: unknown option ${arg}`)
    else if (message === undefined) message = arg
    else return fail(`chat takes one message; quote it: myclaw chat "${[message, arg].join(" ")}"`)
  }
  if (message === undefined || message.trim() === "") return fail("chat needs a message: myclaw chat \"...\"")
  return Either.right(Command.Chat({ message, session, json }))
}

export const parseArgs = (argv: ReadonlyArray<string>): Either.Either<Command, UsageError> => {
  const [command, ...rest] = argv
  switch (command) {
    case "chat":
      return parseChat(rest)
    case "serve":
      return rest.length === 0 ? Either.right(Command.Serve()) : fail(`serve takes no arguments, got ${rest.join(" ")}`)
    case "doctor":
      return rest.length === 0 ? Either.right(Command.Doctor()) : fail(`doctor takes no arguments, got ${rest.join(" ")}`)
    case undefined:
    case "help":
    case "--help":
    case "-h":
      return Either.right(Command.Help())
    default:
      return fail(`unknown command ${JSON.stringify(command)}`)
  }
}
