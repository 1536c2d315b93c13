import { Effect, Layer } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import { IdGenerator, type IdKind, logDrawn } from "../../services/IdGenerator.js"

const POOL_BYTES = 4096

/**
 * The same text as one flat string. Node builds a UUID by joining 2-digit pieces, which V8 keeps as a tree of
 * about twenty pieces (some 350 bytes, where the flat text is 56): every open turn holds its trace id, and every
 * step and record of the turn names it.
 */
const flatCopy = (ascii: string): string => Buffer.from(ascii, "latin1").toString("latin1")

/** Random ids: a UUID for traces, hex with a kind prefix for the rest, from a pool of random bytes refilled in bulk. */
export const makeIdGeneratorLive = Effect.sync(() => {
  let pool = randomBytes(POOL_BYTES)
  let offset = 0
  const hex = (bytes: number): string => {
    if (offset + bytes > pool.length) {
      pool = randomBytes(POOL_BYTES)
      offset = 0
    }
    const text = pool.toString("hex", offset, offset + bytes)
    offset += bytes
    return text
  }
  const make = (kind: IdKind): string => {
    switch (kind) {
      case "trace":
        return flatCopy(randomUUID())
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
  return IdGenerator.of({ next: (kind) => Effect.flatMap(Effect.sync(() => make(kind)), (id) => logDrawn(kind, id)) })
})

export const IdGeneratorLive = Layer.effect(IdGenerator, makeIdGeneratorLive)
