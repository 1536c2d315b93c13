import { Effect, Redacted, Schema } from "effect"
import type { SecretError } from "./SecretError.js"

/** A secret's name: a letter, then letters, digits, `_`, `.` or `-` (at most 64 characters). */
export const SecretName = Schema.String.pipe(Schema.pattern(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/, {
  message: () => "expected a secret name: a letter, then letters, digits, _ . or - (at most 64 characters)"
}))

/**
 * A configuration value that names a secret instead of holding it (`{"secret": "GITHUB_TOKEN"}`), e.g. in an
 * MCP server's env or an HTTP header: the value is resolved when the server or the call starts, never before.
 */
export const SecretRef = Schema.Struct({ secret: SecretName })
export type SecretRef = typeof SecretRef.Type

/** A plain value or a reference to a secret. */
export const SecretOrString = Schema.Union(Schema.String, SecretRef)
export type SecretOrString = typeof SecretOrString.Type

export const isSecretRef = (value: SecretOrString): value is SecretRef => typeof value !== "string"

/** The secrets a record of values names, in order, each once. */
export const secretNamesOf = (values: Readonly<Record<string, SecretOrString>>): ReadonlyArray<string> => [
  ...new Set(Object.values(values).filter(isSecretRef).map((ref) => ref.secret))
]

/**
 * A record of plain values and secret references with every reference resolved (e.g. `secrets.resolve`); the
 * first secret that cannot be resolved fails the whole record, with the error naming it.
 */
export const resolveSecretRefs = (
  values: Readonly<Record<string, SecretOrString>>,
  resolve: (name: string) => Effect.Effect<Redacted.Redacted<string>, SecretError>
): Effect.Effect<Record<string, string>, SecretError> =>
  Effect.map(
    Effect.forEach(Object.entries(values), ([key, value]) =>
      isSecretRef(value)
        ? Effect.map(resolve(value.secret), (secret) => [key, Redacted.value(secret)] as const)
        : Effect.succeed([key, value] as const)),
    (entries) => Object.fromEntries(entries)
  )

/** A configuration value written in the file, or the name of a secret that stands for it. */
export const ConfigValue = SecretOrString
export type ConfigValue = SecretOrString
