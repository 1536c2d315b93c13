import { Context, Effect, Layer, Redacted } from "effect"
import { makeRedactionSet } from "../../domain/Redaction.js"
import { SecretError } from "../../domain/SecretError.js"
import { Secrets } from "../../services/Secrets.js"

/** What a test may ask of the in-memory secrets: the names resolved so far, in order. */
export class ResolvedSecrets extends Context.Tag("myclaw/test/ResolvedSecrets")<ResolvedSecrets, {
  readonly names: Effect.Effect<ReadonlyArray<string>>
}>() {}

/** Secrets held in memory (tests): only resolved values are redacted, as a store nobody decrypted ahead would. */
export const makeSecretsMemory = (values: Readonly<Record<string, string>> = {}) =>
  Effect.sync(() => {
    const known = makeRedactionSet()
    const resolved: Array<string> = []
    const resolve = (name: string) =>
      Effect.suspend(() => {
        const value = values[name]
        if (value === undefined) {
          return Effect.fail(new SecretError({ name, reason: "Missing", message: `no secret named ${name}` }))
        }
        known.add(name, value)
        resolved.push(name)
        return Effect.succeed(Redacted.make(value))
      })
    return {
      secrets: Secrets.of({ resolve, redact: (text) => known.redact(text) }),
      resolved: ResolvedSecrets.of({ names: Effect.sync(() => [...resolved]) })
    }
  })

export const SecretsMemory = (values: Readonly<Record<string, string>> = {}) =>
  Layer.effectContext(
    Effect.map(
      makeSecretsMemory(values),
      ({ resolved, secrets }) => Context.make(Secrets, secrets).pipe(Context.add(ResolvedSecrets, resolved))
    )
  )
