import { Effect, Either, Layer, Redacted } from "effect"
import { makeRedactionSet } from "../../domain/Redaction.js"
import { Secrets } from "../../services/Secrets.js"
import { Workspace } from "../../services/Workspace.js"
import { decryptSecret, readSecretFile, type SecretDocument, secretFileOf } from "./SecretFile.js"
import { loadSecretKey } from "./SecretKey.js"
import { checkSecretName } from "./SecretStoreFile.js"

/**
 * The workspace's encrypted store, read at every resolution (a secret set while the service runs is found).
 * Redaction covers every value resolved so far and every value stored when the layer started: those are
 * decrypted once, on the first redaction, so that a value echoed by anything is replaced even before a tool
 * asked for it. The key is looked up when needed; a missing or unusable key fails only the resolutions.
 */
export const SecretsLive = Layer.effect(
  Secrets,
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const file = secretFileOf(workspace.root)
    const known = makeRedactionSet()
    let stored: { readonly document: SecretDocument; readonly key: Buffer } | undefined

    const document = yield* Effect.either(readSecretFile(file, "*"))
    if (Either.isRight(document) && Object.keys(document.right.secrets).length > 0) {
      const key = yield* Effect.either(loadSecretKey("*", workspace.root))
      if (Either.isRight(key)) stored = { document: document.right, key: key.right }
      else yield* Effect.logWarning(`stored secrets cannot be decrypted: ${key.left.message}`)
    } else if (Either.isLeft(document)) {
      yield* Effect.logWarning(`the secret store cannot be read: ${document.left.message}`)
    }

    const decryptStored = () => {
      if (stored === undefined) return
      const { document, key } = stored
      stored = undefined
      for (const name of Object.keys(document.secrets)) {
        const value = decryptSecret(document, key, name)
        if (Either.isRight(value)) known.add(name, value.right)
      }
    }

    const resolve = Effect.fn("Secrets.resolve")(function*(name: string) {
      yield* Effect.annotateCurrentSpan("myclaw.secret.name", name)
      yield* checkSecretName(name)
      const document = yield* readSecretFile(file, name)
      const value = yield* decryptSecret(document, yield* loadSecretKey(name, workspace.root), name)
      known.add(name, value)
      return Redacted.make(value)
    })

    const redact = (text: string): string => {
      decryptStored()
      return known.redact(text)
    }

    return Secrets.of({ resolve, redact })
  })
)
