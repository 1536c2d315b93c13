import { Effect, Either, Schema } from "effect"
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { messageOf } from "../../domain/Errors.js"
import { syncPath } from "../../domain/FileSync.js"
import { onFirstCall } from "../../domain/OnFirstCall.js"
import { OWNER_FOLDER } from "../../domain/OwnerOnly.js"
import { SecretError } from "../../domain/SecretError.js"

/**
 * The encrypted secret store, `<workspace>/.state/secrets.json`: one JSON document replaced atomically on every
 * change. Names and change times are plain; each value is AES-256-GCM with its own random 12-byte IV, and the
 * secret's name as additional authenticated data, so a value moved under another name fails to decrypt.
 * `key_id` (an HMAC of a constant under the key) tells a wrong key from a tampered value. A file rather than
 * SQLite: a handful of values changed by hand and read whole at each resolution, where one rename keeps every
 * reader consistent. Changes in one process are serialized; two `secrets set` racing in two processes may lose one.
 */
const Base64 = Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9+/]*={0,2}$/))

export const StoredSecret = Schema.Struct({
  iv: Base64,
  tag: Base64,
  ciphertext: Base64,
  changed_at: Schema.String
})
export type StoredSecret = typeof StoredSecret.Type

export const SecretDocument = Schema.Struct({
  myclaw_secrets: Schema.Literal(1),
  key_id: Schema.NullOr(Schema.String),
  secrets: Schema.Record({ key: Schema.String, value: StoredSecret })
})
export type SecretDocument = typeof SecretDocument.Type

export const emptyDocument: SecretDocument = { myclaw_secrets: 1, key_id: null, secrets: {} }

export const secretFileOf = (workspaceRoot: string) => NodePath.join(workspaceRoot, ".state", "secrets.json")

export const keyIdOf = (key: Buffer): string =>
  createHmac("sha256", key).update("myclaw-secrets-key-id").digest("hex").slice(0, 16)

const aad = (name: string) => Buffer.from(`myclaw-secret:${name}`, "utf8")

export const encryptSecret = (key: Buffer, name: string, value: string, changedAt: string): StoredSecret => {
  const iv = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", key, iv)
  cipher.setAAD(aad(name))
  const ciphertext = Buffer.concat([cipher.update(value, "utf8"), cipher.final()])
  return {
    iv: iv.toString("base64"),
    tag: cipher.getAuthTag().toString("base64"),
    ciphertext: ciphertext.toString("base64"),
    changed_at: changedAt
  }
}

/** The value of a stored secret, or why it cannot be read (a wrong key, or a value altered or moved). */
export const decryptSecret = (
  document: SecretDocument,
  key: Buffer,
  name: string
): Either.Either<string, SecretError> => {
  const stored = document.secrets[name]
  if (stored === undefined) {
    return Either.left(new SecretError({ name, reason: "Missing", message: `no secret named ${name}` }))
  }
  if (document.key_id !== null && document.key_id !== keyIdOf(key)) {
    return Either.left(
      new SecretError({
        name,
        reason: "BadKey",
        message: `the secret-store key is not the one the secrets were stored with; ${name} cannot be decrypted`
      })
    )
  }
  try {
    const iv = Buffer.from(stored.iv, "base64")
    if (iv.length !== 12) throw new Error("bad IV length")
    const decipher = createDecipheriv("aes-256-gcm", key, iv)
    decipher.setAAD(aad(name))
    decipher.setAuthTag(Buffer.from(stored.tag, "base64"))
    const plain = Buffer.concat([decipher.update(Buffer.from(stored.ciphertext, "base64")), decipher.final()])
    return Either.right(plain.toString("utf8"))
  } catch {
    return Either.left(
      new SecretError({
        name,
        reason: "Corrupt",
        message: `the stored value of ${name} failed authentication: it was altered, or belongs to another name`
      })
    )
  }
}

const decodeDocument = onFirstCall(() => Schema.decodeUnknownEither(SecretDocument, { errors: "all" }))

/** The store's document; an absent file is an empty store. */
export const readSecretFile = (file: string, name: string): Effect.Effect<SecretDocument, SecretError> =>
  Effect.tryPromise({ try: () => NodeFs.readFile(file, "utf8"), catch: (cause) => cause }).pipe(
    Effect.map((text): string | undefined => text),
    Effect.catchIf((cause) => (cause as NodeJS.ErrnoException).code === "ENOENT", () => Effect.succeed(undefined)),
    Effect.mapError((cause) => new SecretError({ name, reason: "Io", message: `${file}: ${messageOf(cause)}` })),
    Effect.flatMap((text) => {
      if (text === undefined) return Effect.succeed(emptyDocument)
      let json: unknown
      try {
        json = JSON.parse(text)
      } catch {
        return Effect.fail(new SecretError({ name, reason: "Corrupt", message: `${file}: not valid JSON` }))
      }
      return Either.match(decodeDocument(json), {
        onLeft: (error) =>
          Effect.fail(
            new SecretError({
              name,
              reason: "Corrupt",
              message: `${file}: not a myclaw secret store: ${error.message}`
            })
          ),
        onRight: Effect.succeed
      })
    })
  )

/** Replaces the store: a 0600 temporary file, synced, renamed over the old one, and the folder synced. */
export const writeSecretFile = (file: string, document: SecretDocument, name: string) =>
  Effect.tryPromise({
    try: async () => {
      const dir = NodePath.dirname(file)
      await NodeFs.mkdir(dir, { recursive: true, mode: OWNER_FOLDER })
      const temporary = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`
      const handle = await NodeFs.open(temporary, "wx", 0o600)
      try {
        await handle.writeFile(JSON.stringify(document, null, 2) + "\n")
        await handle.sync()
      } finally {
        await handle.close()
      }
      try {
        await NodeFs.rename(temporary, file)
      } catch (error) {
        await NodeFs.rm(temporary, { force: true })
        throw error
      }
      await syncPath(dir)
    },
    catch: (cause) => new SecretError({ name, reason: "Io", message: `cannot write ${file}: ${messageOf(cause)}` })
  })
