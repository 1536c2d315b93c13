import { Effect, Layer } from "effect"
import { drawId, IdGenerator, type IdKind } from "../../services/IdGenerator.js"

const digits = (n: number, width: number): string => n.toString(16).padStart(width, "0")

/** The n-th id of a kind, shaped like the live ones (so prompts and traces have the same lengths). */
export const sequentialId = (kind: IdKind, n: number): string => {
  switch (kind) {
    case "trace":
      return `00000000-0000-4000-8000-${digits(n, 12)}`
    case "wrapper":
      return digits(n, 16)
    case "approval":
      return `ar_${digits(n, 24)}`
    case "reservation":
      return `r_${digits(n, 12)}`
    case "session":
      return digits(n, 12)
  }
}

/** Ids counted from 1 per kind: two runs of the same scripted turn draw the same ids. */
export const makeIdGeneratorSequential = Effect.sync(() => {
  const counters = new Map<IdKind, number>()
  return IdGenerator.of({
    next: (kind) =>
      drawId(kind, () => {
        const n = (counters.get(kind) ?? 0) + 1
        counters.set(kind, n)
        return sequentialId(kind, n)
      })
  })
})

export const IdGeneratorSequential = Layer.effect(IdGenerator, makeIdGeneratorSequential)
