import { Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { drawId, IdGenerator, type IdKind } from "../../services/IdGenerator.js"

const POOL_BYTES = 4096

const DIGITS = "0123456789abcdef"

/**
 * A random (version 4) UUID from the 16 random bytes of `bytes` at `offset`, written into `into` (36 bytes or more)
 * and read out as one flat string. Node's `randomUUID` joins 2-digit pieces, which V8 keeps as a tree of about
 * twenty pieces (some 350 bytes, where the flat text is 56), and copying it flat cost more than making it: every
 * open turn holds its trace id, and every step and record of the turn names it.
 */
export const uuidFrom = (bytes: Buffer, offset: number, into: Buffer): string => {
  let at = 0
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) into[at++] = 0x2d
    const random = bytes.readUInt8(offset + i)
    // The version (4) and the variant (10xx) bits.
    const byte = i === 6 ? (random & 0x0f) | 0x40 : i === 8 ? (random & 0x3f) | 0x80 : random
    into[at++] = DIGITS.charCodeAt(byte >> 4)
    into[at++] = DIGITS.charCodeAt(byte & 15)
  }
  return into.toString("latin1", 0, 36)
}

/** Random ids: a UUID for traces, hex with a kind prefix for the rest, from a pool of random bytes refilled in bulk. */
export const makeIdGeneratorLive = Effect.sync(() => {
  let pool = randomBytes(POOL_BYTES)
  let offset = 0
  const take = (bytes: number): number => {
    if (offset + bytes > pool.length) {
      pool = randomBytes(POOL_BYTES)
      offset = 0
    }
    const at = offset
    offset += bytes
    return at
  }
  const hex = (bytes: number): string => {
    const at = take(bytes)
    return pool.toString("hex", at, at + bytes)
  }
  const uuid = Buffer.alloc(36)
  const make = (kind: IdKind): string => {
    switch (kind) {
      case "trace": {
        // Taken before `pool` is read: taking may refill it.
        const at = take(16)
        return uuidFrom(pool, at, uuid)
      }
      case "wrapper":
        return hex(8)
      case "approval":
        return `ar_${hex(12)}`
      case "reservation":
        return `r_${hex(6)}`
      case "session":
        return hex(6)
    }
  }
  return IdGenerator.of({ next: (kind) => drawId(kind, make) })
})

export const IdGeneratorLive = Layer.effect(IdGenerator, makeIdGeneratorLive)
