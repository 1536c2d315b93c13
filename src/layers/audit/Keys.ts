import { Effect, Either } from "effect"
import { createHmac, randomBytes } from "node:crypto"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { AuditError, messageOf } from "../../domain/Errors.js"
import { syncPath } from "../../domain/FileSync.js"

/**
 * Forward-secure signing keys, as in systemd's forward-secure sealing: one key per epoch (a UTC day), each
 * derived one-way from the one before (`K(e+1) = HMAC-SHA256(K(e), "myclaw-audit-epoch")`). The machine keeps
 * only the current key, so whoever steals it cannot sign as an earlier day. The first key is the seed: written
 * once, for the owner to move off the machine; with it, verification re-derives every epoch's key.
 */
export interface EpochKey {
  readonly epoch: number
  readonly key: Buffer
}

export const DAY_MS = 86_400_000

/** The epoch of an instant: whole UTC days since 1970-01-01. */
export const epochOf = (millis: number): number => Math.floor(millis / DAY_MS)

export const nextKey = (key: Uint8Array): Buffer => createHmac("sha256", key).update("myclaw-audit-epoch").digest()

/** The key of `epoch` derived from an earlier one; undefined for an epoch before `from` (keys never go back). */
export const deriveKey = (from: EpochKey, epoch: number): EpochKey | undefined => {
  if (epoch < from.epoch) return undefined
  let key = from.key
  for (let e = from.epoch; e < epoch; e++) key = nextKey(key)
  return { epoch, key }
}

/** Every epoch's key from a seed, derived once each and remembered (verification walks epochs in order). */
export const keyring = (seed: EpochKey) => {
  const known = new Map<number, Buffer>([[seed.epoch, seed.key]])
  let furthest = seed
  return (epoch: number): Buffer | undefined => {
    const cached = known.get(epoch)
    if (cached !== undefined) return cached
    if (epoch < seed.epoch) return undefined
    const start = epoch > furthest.epoch ? furthest : seed
    let key = start.key
    for (let e = start.epoch; e < epoch; e++) {
      key = nextKey(key)
      known.set(e + 1, key)
    }
    if (epoch > furthest.epoch) furthest = { epoch, key }
    return key
  }
}

type KeyKind = "seed" | "key"

const encodeKey = (kind: KeyKind, key: EpochKey) =>
  JSON.stringify({ myclaw_audit: kind, version: 1, epoch: key.epoch, key: key.key.toString("hex") }) + "\n"

/** A seed or key file's content (JSON: `{"myclaw_audit":"seed","version":1,"epoch":N,"key":"<64 hex>"}`). */
export const parseKeyFile = (bytes: Uint8Array): Either.Either<EpochKey, string> => {
  try {
    const value = JSON.parse(Buffer.from(bytes).toString("utf8")) as Record<string, unknown>
    const { epoch, key, myclaw_audit } = value
    if (myclaw_audit !== "seed" && myclaw_audit !== "key") return Either.left("not a myclaw audit seed or key file")
    if (typeof epoch !== "number" || !Number.isSafeInteger(epoch) || epoch < 0) return Either.left("bad epoch")
    if (typeof key !== "string" || !/^[0-9a-f]{64}$/.test(key)) return Either.left("bad key")
    return Either.right({ epoch, key: Buffer.from(key, "hex") })
  } catch {
    return Either.left("not a myclaw audit seed or key file (expected JSON)")
  }
}

const fail = (path: string, what: string) => (cause: unknown) =>
  new AuditError({ path, reason: "Io", message: `${what}: ${messageOf(cause)}`, cause })

/** Writes a file with mode 0600 and syncs it; `exclusive` refuses to replace an existing one. */
const writeSecret = async (file: string, text: string, exclusive: boolean) => {
  const handle = await NodeFs.open(file, exclusive ? "wx" : "w", 0o600)
  try {
    await handle.writeFile(text)
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** The key directory: `audit-key.json` (the current key) and, until the owner moves it, `audit-seed.json`. */
export const makeKeyStore = (keyDir: string) => {
  const keyFile = NodePath.join(keyDir, "audit-key.json")
  const seedFile = NodePath.join(keyDir, "audit-seed.json")

  const ensureDirectory = Effect.tryPromise({
    try: async () => {
      await NodeFs.mkdir(keyDir, { recursive: true, mode: 0o700 })
      await NodeFs.chmod(keyDir, 0o700)
    },
    catch: fail(keyDir, "cannot prepare the audit key directory")
  })

  const load = Effect.tryPromise({
    try: () => NodeFs.readFile(keyFile).then((bytes): Buffer | undefined => bytes),
    catch: (cause) => cause
  }).pipe(
    Effect.catchIf((cause) => (cause as NodeJS.ErrnoException).code === "ENOENT", () => Effect.succeed(undefined)),
    Effect.mapError(fail(keyFile, "cannot read the audit key")),
    Effect.flatMap((bytes) =>
      bytes === undefined ? Effect.succeed(undefined) : Either.match(parseKeyFile(bytes), {
        // A key that cannot be read as one is as good as missing: the remedy is the same, restore the key directory.
        onLeft: (problem) =>
          Effect.fail(
            new AuditError({ path: keyFile, reason: "KeyMissing", message: `invalid audit key: ${problem}` })
          ),
        onRight: (key) => Effect.succeed<EpochKey | undefined>(key)
      })
    )
  )

  /** Replaces the current key (write a temporary file, sync, rename, sync the directory). */
  const store = (key: EpochKey) =>
    Effect.tryPromise({
      try: async () => {
        const temporary = `${keyFile}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`
        await writeSecret(temporary, encodeKey("key", key), false)
        await NodeFs.rename(temporary, keyFile)
        await syncPath(keyDir)
      },
      catch: fail(keyFile, "cannot store the audit key")
    })

  /** The first key of a new log: written as the seed (once, never replaced) and as the current key. */
  const create = (epoch: number) =>
    Effect.gen(function*() {
      yield* ensureDirectory
      const seed: EpochKey = { epoch, key: randomBytes(32) }
      yield* Effect.tryPromise({
        try: () => writeSecret(seedFile, encodeKey("seed", seed), true),
        catch: fail(seedFile, "cannot write the audit seed")
      })
      yield* store({ epoch, key: Buffer.from(seed.key) })
      yield* Effect.logWarning(
        `the audit log's verification seed is ${seedFile}: move it off this machine (a password manager, a USB key) ` +
          `and delete it here. "myclaw audit verify --seed FILE" needs it to check every day's signatures; ` +
          "a copy left on this machine lets a thief re-sign the whole log."
      )
      return { epoch, key: Buffer.from(seed.key) } satisfies EpochKey
    })

  const moveOn = Effect.fnUntraced(function*(current: EpochKey, epoch: number) {
    const next = deriveKey(current, epoch)
    if (next === undefined || next.epoch === current.epoch) return current
    yield* store(next)
    current.key.fill(0)
    return next
  })
  /**
   * The key of `epoch`, stored before it is used; the old key's bytes are wiped from memory. Every batch of the
   * writer asks: all but a day's first are answered at once (keys never go back).
   */
  const advance = (current: EpochKey, epoch: number): Effect.Effect<EpochKey, AuditError> =>
    epoch <= current.epoch ? Effect.succeed(current) : moveOn(current, epoch)

  /** Installs a key derived again from the seed (a restored workspace); the folder is created if needed. */
  const restore = (key: EpochKey) => Effect.zipRight(ensureDirectory, store(key))

  return { keyDir, keyFile, seedFile, ensureDirectory, load, create, advance, restore } as const
}

export type KeyStore = ReturnType<typeof makeKeyStore>
