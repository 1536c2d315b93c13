import { Effect, Layer } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import { IdGenerator, type IdKind, logDrawn } from "../../services/IdGenerator.js"

const POOL_BYTES = 4096

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
        return randomUUID()
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
