import { Config, Effect, Either, Option, Redacted } from "effect"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { messageOf } from "../../domain/Errors.js"
import { isInside } from "../../domain/Paths.js"
import { SecretError } from "../../domain/SecretError.js"

const KEY_FORMAT = "32 bytes written as 64 hex digits or as base64 (44 characters)"

/**
 * A secret-store key as written in MYCLAW_SECRET_KEY or a key file: 32 bytes as 64 hex digits or as base64
 * (standard or URL-safe, padding optional), surrounding whitespace ignored. The problem never quotes the text.
 */
export const parseSecretKey = (text: string): Either.Either<Buffer, string> => {
  const trimmed = text.trim()
  if (trimmed === "") return Either.left(`empty; expected ${KEY_FORMAT}`)
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Either.right(Buffer.from(trimmed, "hex"))
  if (/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(trimmed)) {
    const bytes = Buffer.from(trimmed.replaceAll("-", "+").replaceAll("_", "/"), "base64")
    if (bytes.length === 32) return Either.right(bytes)
  }
  return Either.left(`expected ${KEY_FORMAT}, got ${trimmed.length} characters that are neither`)
}

/** Where the key file is looked for when MYCLAW_SECRET_KEY_FILE is not set: `~/.config/myclaw/secret.key`. */
const defaultKeyFile = Config.all({
  xdg: Config.option(Config.string("XDG_CONFIG_HOME")),
  home: Config.option(Config.string("HOME"))
}).pipe(
  Config.map(({ home, xdg }) =>
    Option.orElse(
      Option.filter(xdg, (dir) => NodePath.isAbsolute(dir)),
      () => Option.map(Option.filter(home, (dir) => NodePath.isAbsolute(dir)), (dir) => NodePath.join(dir, ".config"))
    ).pipe(
      Option.map((dir) => NodePath.join(dir, "myclaw", "secret.key"))
    )
  )
)

const keyConfig = Config.all({
  inline: Config.option(Config.redacted("MYCLAW_SECRET_KEY")),
  file: Config.option(Config.string("MYCLAW_SECRET_KEY_FILE")),
  fallback: defaultKeyFile
})

export const howToMakeAKey = "umask 077; mkdir -p ~/.config/myclaw && " +
  "head -c 32 /dev/urandom | base64 > ~/.config/myclaw/secret.key (or set MYCLAW_SECRET_KEY)"

const badKey = (name: string, message: string) => new SecretError({ name, reason: "BadKey", message })

/**
 * A key file is used only when it is a regular file of this user, readable by nobody else (mode 0600 or 0400),
 * and outside the workspace: a key kept beside the secrets it protects protects nothing.
 */
const readKeyFile = (name: string, file: string, workspaceRoot: string, explicit: boolean) =>
  Effect.gen(function*() {
    const stat = yield* Effect.tryPromise({ try: () => NodeFs.stat(file), catch: (cause) => cause }).pipe(
      Effect.mapError((cause) =>
        (cause as NodeJS.ErrnoException).code === "ENOENT"
          ? explicit
            ? badKey(name, `key file ${file} (MYCLAW_SECRET_KEY_FILE) does not exist`)
            : new SecretError({
              name,
              reason: "NoKey",
              message: `no secret-store key: MYCLAW_SECRET_KEY is not set and ${file} does not exist; ` +
                `make one with: ${howToMakeAKey}`
            })
          : badKey(name, `key file ${file}: ${messageOf(cause)}`)
      )
    )
    if (!stat.isFile()) return yield* badKey(name, `key file ${file} is not a regular file`)
    if ((stat.mode & 0o077) !== 0) {
      const mode = (stat.mode & 0o777).toString(8).padStart(4, "0")
      return yield* badKey(
        name,
        `key file ${file} has mode ${mode}: others may read it; it must be 0600 (chmod 600 ${file})`
      )
    }
    const uid = process.getuid?.()
    if (uid !== undefined && stat.uid !== uid) {
      return yield* badKey(name, `key file ${file} belongs to another user (uid ${stat.uid})`)
    }
    const [real, root] = yield* Effect.promise(() =>
      Promise.all([NodeFs.realpath(file).catch(() => file), NodeFs.realpath(workspaceRoot).catch(() => workspaceRoot)])
    )
    if (isInside(root, real)) {
      return yield* badKey(
        name,
        `key file ${file} is inside the workspace ${root}: keep it outside, where a backup or a tool reading ` +
          "the workspace cannot take it along with the secrets"
      )
    }
    const text = yield* Effect.tryPromise({
      try: () => NodeFs.readFile(file, "utf8"),
      catch: (cause) => badKey(name, `key file ${file}: ${messageOf(cause)}`)
    })
    return yield* Either.match(parseSecretKey(text), {
      onLeft: (problem) => Effect.fail(badKey(name, `key file ${file}: ${problem}`)),
      onRight: Effect.succeed
    })
  })

/**
 * The secret-store key: MYCLAW_SECRET_KEY (read as a redacted config value), else the key file named by
 * MYCLAW_SECRET_KEY_FILE, else `~/.config/myclaw/secret.key` when it exists. `name` is the secret the key is
 * wanted for, carried by the error.
 */
export const loadSecretKey = (name: string, workspaceRoot: string): Effect.Effect<Buffer, SecretError> =>
  Effect.gen(function*() {
    const config = yield* Effect.mapError(
      keyConfig,
      (error) => badKey(name, `secret-store key configuration: ${String(error)}`)
    )
    if (Option.isSome(config.inline)) {
      return yield* Either.match(parseSecretKey(Redacted.value(config.inline.value)), {
        onLeft: (problem) => Effect.fail(badKey(name, `MYCLAW_SECRET_KEY: ${problem}`)),
        onRight: Effect.succeed
      })
    }
    if (Option.isSome(config.file)) {
      return yield* readKeyFile(name, NodePath.resolve(config.file.value), workspaceRoot, true)
    }
    if (Option.isSome(config.fallback)) {
      return yield* readKeyFile(name, config.fallback.value, workspaceRoot, false)
    }
    return yield* new SecretError({
      name,
      reason: "NoKey",
      message: `no secret-store key: set MYCLAW_SECRET_KEY or MYCLAW_SECRET_KEY_FILE (${KEY_FORMAT})`
    })
  })
