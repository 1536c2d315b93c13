import { Data, Either } from "effect"
import type { AuditKind } from "../domain/AuditRecord.js"
import { auditKinds, isAuditKind, parseAuditTime } from "./AuditArgs.js"
import { helpOrVersion, usage } from "./Usage.js"

export type Command = Data.TaggedEnum<{
  Chat: { readonly message: string; readonly session: string | undefined; readonly json: boolean }
  Serve: {}
  Doctor: {}
  Budget: {}
  AuditVerify: { readonly seedFile: string | undefined }
  AuditResume: { readonly seedFile: string }
  AuditQuery: {
    readonly kind: AuditKind | undefined
    readonly since: number | undefined
    readonly until: number | undefined
    readonly sender: string | undefined
    readonly limit: number
    readonly json: boolean
  }
  Backup: { readonly dest: string | undefined }
  Digest: { readonly day: string; readonly polish: boolean }
  BudgetOverride: { readonly until: string; readonly reason: string }
  SessionsList: {}
  SessionsShow: { readonly id: string }
  SessionsForget: { readonly id: string }
  SecretsSet: { readonly name: string }
  SecretsList: {}
  SecretsRm: { readonly name: string }
  Plans: { readonly action: "list" | "show" | "forget"; readonly id: string | undefined }
  Help: {}
  Version: {}
}>
export const Command = Data.taggedEnum<Command>()

/** A command line myclaw does not understand; the message says what is wrong and how to fix it. */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

export { usage }

const fail = (message: string) => Either.left(new UsageError({ message }))

const parsePlans = (args: ReadonlyArray<string>): Either.Either<Command, UsageError> => {
  const [action = "list", id, ...extra] = args
  if (action === "list") {
    return args.length <= 1
      ? Either.right(Command.Plans({ action, id: undefined }))
      : fail("plans list takes no arguments")
  }
  if (action !== "show" && action !== "forget") {
    return fail(`plans: unknown action ${action} (list, show ID, forget ID)`)
  }
  if (id === undefined || extra.length > 0) return fail(`plans ${action} takes one plan id (see myclaw plans list)`)
  return Either.right(Command.Plans({ action, id }))
}

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

/** `--name value` or `--name=value` options; every option must be known and given once. */
const parseOptions = (
  command: string,
  args: ReadonlyArray<string>,
  known: ReadonlyArray<string>
): Either.Either<Record<string, string>, UsageError> => {
  const options: Record<string, string> = {}
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    const [name, inline] = arg.startsWith("--") ? arg.slice(2).split(/=(.*)/s, 2) : [undefined, undefined]
    if (name === undefined || !known.includes(name)) return fail(`${command}: unexpected ${JSON.stringify(arg)}`)
    const value = inline ?? args[++i]
    if (value === undefined || value.startsWith("--")) return fail(`${command}: --${name} needs a value`)
    if (name in options) return fail(`${command}: --${name} given twice`)
    options[name] = value
  }
  return Either.right(options)
}

const parseBudget = (args: ReadonlyArray<string>): Either.Either<Command, UsageError> => {
  if (args.length === 0) return Either.right(Command.Budget())
  if (args[0] !== "override") {
    return fail(`budget: unknown subcommand ${JSON.stringify(args[0])} (try: budget override)`)
  }
  return Either.flatMap(parseOptions("budget override", args.slice(1), ["until", "reason"]), (options) => {
    const until = options.until
    const reason = options.reason?.trim()
    if (until === undefined || !/^([01]\d|2[0-3]):[0-5]\d$/.test(until)) {
      return fail("budget override needs --until HH:MM (24-hour local time, e.g. 23:59)")
    }
    if (reason === undefined || reason === "") {
      return fail("budget override needs --reason \"why\": it goes in the audit log")
    }
    return Either.right(Command.BudgetOverride({ until, reason }))
  })
}

const parseSessions = (args: ReadonlyArray<string>): Either.Either<Command, UsageError> => {
  const [action, ...rest] = args
  switch (action) {
    case undefined:
    case "list":
      return rest.length === 0
        ? Either.right(Command.SessionsList())
        : fail(`sessions list takes no arguments, got ${rest.join(" ")}`)
    case "show":
    case "forget":
      return rest.length === 1 && rest[0] !== "" && !rest[0]!.startsWith("--")
        ? Either.right(
          action === "show" ? Command.SessionsShow({ id: rest[0]! }) : Command.SessionsForget({ id: rest[0]! })
        )
        : fail(`sessions ${action} takes one session id (myclaw sessions list shows them)`)
    default:
      return fail(`sessions: unknown subcommand ${JSON.stringify(action)} (try: list, show ID, forget ID)`)
  }
}

const parseAudit = (args: ReadonlyArray<string>): Either.Either<Command, UsageError> => {
  const [sub, ...rest] = args
  if (sub === "verify") {
    return Either.map(parseOptions("audit verify", rest, ["seed"]), (o) => Command.AuditVerify({ seedFile: o.seed }))
  }
  if (sub === "resume") {
    return Either.flatMap(parseOptions("audit resume", rest, ["seed"]), (o) =>
      o.seed === undefined
        ? fail("audit resume needs --seed FILE: the verification seed written when the log began")
        : Either.right(Command.AuditResume({ seedFile: o.seed })))
  }
  if (sub !== "query") return fail(`audit: expected verify, query or resume, got ${JSON.stringify(sub ?? "")}`)
  const json = rest.includes("--json")
  return Either.flatMap(
    parseOptions("audit query", rest.filter((arg) => arg !== "--json"), ["kind", "since", "until", "sender", "limit"]),
    (o) => {
      if (o.kind !== undefined && !isAuditKind(o.kind)) {
        return fail(`audit query: --kind ${o.kind} is not a record kind (${auditKinds.join(", ")})`)
      }
      const limit = o.limit === undefined ? 20 : Number(o.limit)
      if (!/^\d+$/.test(o.limit ?? "20") || !Number.isSafeInteger(limit) || limit <= 0 || limit > MAX_LIMIT) {
        return fail(`audit query: --limit must be a whole number from 1 to ${MAX_LIMIT}, got ${o.limit}`)
      }
      const time = (name: "since" | "until") => {
        const text = o[name]
        if (text === undefined) return Either.right(undefined)
        return Either.mapLeft(
          parseAuditTime(text, name),
          (message) => new UsageError({ message: `audit query: ${message}` })
        )
      }
      return Either.flatMap(
        time("since"),
        (since) =>
          Either.flatMap(
            time("until"),
            (until) =>
              since !== undefined && until !== undefined && since > until
                ? fail(`audit query: --since ${o.since} is after --until ${o.until}`)
                : Either.right(
                  Command.AuditQuery({
                    kind: o.kind as AuditKind | undefined,
                    since,
                    until,
                    sender: o.sender,
                    limit,
                    json
                  })
                )
          )
      )
    }
  )
}

const SECRET_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/

/** Never echoes an argument it refuses: a value typed where a name belongs must not reach the terminal's log. */
const parseSecrets = (args: ReadonlyArray<string>): Either.Either<Command, UsageError> => {
  const [sub, ...rest] = args
  const named = (build: (name: string) => Command) => {
    const [name, ...extra] = rest
    if (name === undefined) return fail(`secrets ${sub} needs a NAME`)
    if (extra.length > 0) {
      return fail(
        sub === "set"
          ? "secrets set takes the value on standard input, never as an argument (an argument stays in the shell " +
            "history and is visible to other processes): printf '%s' \"$VALUE\" | myclaw secrets set NAME"
          : `secrets ${sub} takes one NAME, got ${rest.length} arguments`
      )
    }
    if (!SECRET_NAME.test(name)) {
      return fail(`secrets ${sub}: a NAME is a letter, then letters, digits, _ . or - (at most 64 characters)`)
    }
    return Either.right(build(name))
  }
  switch (sub) {
    case "set":
      return named((name) => Command.SecretsSet({ name }))
    case "rm":
      return named((name) => Command.SecretsRm({ name }))
    case "list":
      return rest.length === 0 ? Either.right(Command.SecretsList()) : fail("secrets list takes no arguments")
    default:
      return fail("secrets: expected set NAME, list or rm NAME")
  }
}

/** The most records one `audit query` prints. */
export const MAX_LIMIT = 1_000_000

export const parseArgs = (argv: ReadonlyArray<string>): Either.Either<Command, UsageError> => {
  const quick = helpOrVersion(argv)
  if (quick !== undefined) return Either.right(quick === "help" ? Command.Help() : Command.Version())
  const [command, ...rest] = argv
  switch (command) {
    case "chat":
      return parseChat(rest)
    case "serve":
      return rest.length === 0 ? Either.right(Command.Serve()) : fail(`serve takes no arguments, got ${rest.join(" ")}`)
    case "budget":
      return parseBudget(rest)
    case "audit":
      return parseAudit(rest)
    case "sessions":
      return parseSessions(rest)
    case "secrets":
      return parseSecrets(rest)
    case "backup":
      return Either.map(parseOptions("backup", rest, ["dest"]), (options) => Command.Backup({ dest: options.dest }))
    case "digest": {
      const polish = !rest.includes("--no-polish")
      const days = rest.filter((arg) => arg !== "--no-polish")
      if (days.length > 1 || days.some((arg) => arg.startsWith("--"))) {
        return fail(`digest takes one day (today or YYYY-MM-DD) and --no-polish, got ${days.join(" ")}`)
      }
      return Either.right(Command.Digest({ day: days[0] ?? "today", polish }))
    }
    case "plans":
      return parsePlans(rest)
    case "doctor":
      return rest.length === 0
        ? Either.right(Command.Doctor())
        : fail(`doctor takes no arguments, got ${rest.join(" ")}`)
    default:
      return fail(`unknown command ${JSON.stringify(command)}`)
  }
}
