import { Clock, Console, Effect, Redacted } from "effect"
import * as NodeOs from "node:os"
import { isoAt } from "../domain/Time.js"
import { AuditLog } from "../services/AuditLog.js"
import { SecretStore } from "../services/SecretStore.js"
import { UsageError } from "./Args.js"

const MAX_VALUE_BYTES = 64 * 1024

const sender = (): string => {
  try {
    return `cli:${NodeOs.userInfo().username}`
  } catch {
    return "cli"
  }
}

/** Everything on standard input (a pipe or a file). */
const readPiped = Effect.async<string, UsageError>((resume) => {
  const chunks: Array<Buffer> = []
  let size = 0
  const onData = (chunk: Buffer) => {
    size += chunk.length
    if (size > MAX_VALUE_BYTES) {
      cleanup()
      resume(Effect.fail(new UsageError({ message: `secrets set: the value is over ${MAX_VALUE_BYTES} bytes` })))
    } else chunks.push(chunk)
  }
  const onEnd = () => {
    cleanup()
    resume(Effect.succeed(Buffer.concat(chunks).toString("utf8")))
  }
  const cleanup = () => {
    process.stdin.off("data", onData)
    process.stdin.off("end", onEnd)
    process.stdin.pause()
  }
  process.stdin.on("data", onData)
  process.stdin.on("end", onEnd)
})

/** One line typed at the terminal without echo; Ctrl-C or Ctrl-D gives up. */
const readHidden = (name: string) =>
  Effect.async<string, UsageError>((resume) => {
    const input = process.stdin
    process.stderr.write(`value of ${name} (not shown, Enter to finish): `)
    input.setRawMode(true)
    input.resume()
    let typed = ""
    const finish = (result: Effect.Effect<string, UsageError>) => {
      input.off("data", onData)
      input.setRawMode(false)
      input.pause()
      process.stderr.write("\n")
      resume(result)
    }
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString("utf8")) {
        if (char === "\r" || char === "\n") return finish(Effect.succeed(typed))
        if (char === "\u0003" || char === "\u0004") {
          return finish(Effect.fail(new UsageError({ message: "secrets set: cancelled, nothing stored" })))
        }
        typed = char === "\u007f" || char === "\b" ? typed.slice(0, -1) : typed + char
      }
    }
    input.on("data", onData)
  })

/** `myclaw secrets set NAME`: the value from standard input (one trailing newline dropped); audited, never shown. */
export const secretsSet = (options: { readonly name: string }) =>
  Effect.gen(function*() {
    const audit = yield* AuditLog
    yield* audit.ready
    const text = yield* (process.stdin.isTTY ? readHidden(options.name) : readPiped)
    const value = text.replace(/\r?\n$/, "")
    if (value === "") {
      return yield* new UsageError({
        message: `secrets set ${options.name}: no value on standard input; ` +
          `printf '%s' "$VALUE" | myclaw secrets set ${options.name}`
      })
    }
    const action = yield* (yield* SecretStore).set(options.name, Redacted.make(value))
    yield* audit.append({
      kind: "secret_changed",
      at: isoAt(yield* Clock.currentTimeMillis),
      sender: sender(),
      name: options.name,
      action
    })
    yield* Console.log(`secret ${options.name} ${action} (encrypted; recorded in the audit log)`)
    return 0
  })

/** `myclaw secrets list`: names and last change, never a value. */
export const secretsList = Effect.gen(function*() {
  const listed = yield* (yield* SecretStore).list
  if (listed.length === 0) {
    yield* Console.log("no secrets stored (add one with: printf '%s' \"$VALUE\" | myclaw secrets set NAME)")
    return 0
  }
  const width = Math.max(4, ...listed.map((entry) => entry.name.length))
  yield* Console.log(`${"name".padEnd(width)}  last changed`)
  for (const entry of listed) yield* Console.log(`${entry.name.padEnd(width)}  ${entry.changedAt}`)
  return 0
})

/** `myclaw secrets rm NAME`: audited; a name that is not stored is an error (exit 1). */
export const secretsRm = (options: { readonly name: string }) =>
  Effect.gen(function*() {
    const audit = yield* AuditLog
    yield* audit.ready
    const removed = yield* (yield* SecretStore).remove(options.name)
    if (!removed) {
      yield* Console.error(`myclaw: no secret named ${options.name}`)
      return 1
    }
    yield* audit.append({
      kind: "secret_changed",
      at: isoAt(yield* Clock.currentTimeMillis),
      sender: sender(),
      name: options.name,
      action: "removed"
    })
    yield* Console.log(`secret ${options.name} removed (recorded in the audit log)`)
    return 0
  })
