import { Clock, Effect, Layer, Redacted, Schema } from "effect"
import { onFirstCall } from "../../domain/OnFirstCall.js"
import { MIN_SECRET_LENGTH } from "../../domain/Redaction.js"
import { SecretError } from "../../domain/SecretError.js"
import { SecretName } from "../../domain/SecretRef.js"
import { isoAt } from "../../domain/Time.js"
import { SecretStore } from "../../services/SecretStore.js"
import { Workspace } from "../../services/Workspace.js"
import { encryptSecret, keyIdOf, readSecretFile, secretFileOf, writeSecretFile } from "./SecretFile.js"
import { loadSecretKey } from "./SecretKey.js"

const isName = onFirstCall(() => Schema.is(SecretName))

export const checkSecretName = (name: string): Effect.Effect<void, SecretError> =>
  isName(name) ? Effect.void : Effect.fail(
    new SecretError({
      name,
      reason: "InvalidName",
      message: `${JSON.stringify(name)} is not a secret name: a letter, then letters, digits, _ . or - (at most 64)`
    })
  )

/** The secret store of the workspace, as the `myclaw secrets` commands change it. */
export const SecretStoreFile = Layer.effect(
  SecretStore,
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const file = secretFileOf(workspace.root)
    const writing = yield* Effect.makeSemaphore(1)

    const set = Effect.fn("SecretStore.set")(function*(name: string, value: Redacted.Redacted<string>) {
      yield* checkSecretName(name)
      const plain = Redacted.value(value)
      if (plain.length < MIN_SECRET_LENGTH) {
        return yield* new SecretError({
          name,
          reason: "InvalidValue",
          message: `the value of ${name} has fewer than ${MIN_SECRET_LENGTH} characters: a value that short ` +
            "cannot be told apart from ordinary text, so it could not be kept out of outputs"
        })
      }
      const key = yield* loadSecretKey(name, workspace.root)
      const keyId = keyIdOf(key)
      const document = yield* readSecretFile(file, name)
      const stored = Object.keys(document.secrets).length
      if (document.key_id !== null && document.key_id !== keyId && stored > 0) {
        return yield* new SecretError({
          name,
          reason: "BadKey",
          message: `the secret-store key is not the one the ${stored} stored secret(s) were written with; ` +
            `${name} was not stored (use the original key, or remove the old secrets first)`
        })
      }
      const changedAt = isoAt(yield* Clock.currentTimeMillis)
      yield* writeSecretFile(file, {
        myclaw_secrets: 1,
        key_id: keyId,
        secrets: { ...document.secrets, [name]: encryptSecret(key, name, plain, changedAt) }
      }, name)
      return name in document.secrets ? "updated" as const : "created" as const
    }, (effect) => writing.withPermits(1)(effect))

    const remove = Effect.fn("SecretStore.remove")(function*(name: string) {
      yield* checkSecretName(name)
      const document = yield* readSecretFile(file, name)
      if (!(name in document.secrets)) return false
      const secrets = Object.fromEntries(Object.entries(document.secrets).filter(([other]) => other !== name))
      const empty = Object.keys(secrets).length === 0
      yield* writeSecretFile(file, { myclaw_secrets: 1, key_id: empty ? null : document.key_id, secrets }, name)
      return true
    }, (effect) => writing.withPermits(1)(effect))

    const list = Effect.map(
      readSecretFile(file, "*"),
      (document) =>
        Object.entries(document.secrets).map(([name, stored]) => ({ name, changedAt: stored.changed_at })).sort((
          a,
          b
        ) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
    )

    return SecretStore.of({ set, list, remove })
  })
)
