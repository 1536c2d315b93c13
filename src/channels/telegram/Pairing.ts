import { FileSystem } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import * as NodePath from "node:path"
import { OWNER_FILE, OWNER_FOLDER } from "../../domain/OwnerOnly.js"
import { Workspace } from "../../services/Workspace.js"

/** Owners paired with a one-time code, kept in the workspace so that a restart keeps them. */
const PairedFile = Schema.parseJson(Schema.Struct({ paired: Schema.Array(Schema.Int) }))

/** Wrong codes tried before the code is void (it is short enough to read out; it must not be guessable). */
const MAX_ATTEMPTS = 5

const digest = (text: string) => createHash("sha256").update(text.trim().toUpperCase()).digest()

/** A code to type: 10 characters without look-alikes (about 50 bits). */
const newCode = (): string => {
  const alphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
  return [...randomBytes(10)].map((byte) => alphabet[byte % alphabet.length]).join("")
}

/**
 * Pairing the first owner: with nobody allowed or paired yet, a one-time code (shown by `serve` at start) that
 * whoever sends `/pair CODE` first in a private chat becomes the owner with; a few wrong tries void it.
 */
export const makePairing = (configuredOwners: ReadonlyArray<number>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const file = NodePath.join((yield* Workspace).root, ".telegram", "paired.json")
    const stored = yield* fs.readFileString(file).pipe(
      Effect.flatMap(Schema.decodeUnknown(PairedFile)),
      Effect.map((content) => content.paired),
      Effect.catchAll((error) =>
        error._tag === "SystemError" && error.reason === "NotFound"
          ? Effect.succeed([] as ReadonlyArray<number>)
          : Effect.as(Effect.logWarning(`telegram: ${file} is unreadable; no paired owner is loaded`), [])
      )
    )
    const paired = [...stored]
    let code: string | undefined = configuredOwners.length === 0 && paired.length === 0 ? newCode() : undefined
    let attempts = 0

    /** Whether `text` is the code; the first right one consumes it and keeps `userId` as an owner. */
    const tryPair = (userId: number, text: string) =>
      Effect.gen(function*() {
        if (code === undefined) return false
        const presented = digest(text)
        if (!timingSafeEqual(presented, digest(code))) {
          attempts++
          if (attempts >= MAX_ATTEMPTS) {
            code = undefined
            yield* Effect.logWarning(`telegram: ${MAX_ATTEMPTS} wrong pairing codes: pairing is off until a restart`)
          }
          return false
        }
        code = undefined
        paired.push(userId)
        yield* fs.makeDirectory(NodePath.dirname(file), { recursive: true, mode: OWNER_FOLDER }).pipe(
          Effect.zipRight(fs.writeFileString(file, JSON.stringify({ paired }) + "\n", { mode: OWNER_FILE })),
          Effect.catchAll((error) => Effect.logError(`telegram: cannot keep the paired owner in ${file}`, error))
        )
        return true
      })

    return { paired: paired as ReadonlyArray<number>, code: Option.fromNullable(code), tryPair } as const
  })
