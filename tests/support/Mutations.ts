import { FastCheck as fc } from "effect"

/**
 * An object changed in one place: a property dropped, added (any JSON value), replaced by any JSON value, or moved
 * to the end. What a check that vouches for decoded values is tested against.
 */
export const mutated = (record: Record<string, unknown>) =>
  fc.tuple(fc.nat(), fc.constantFrom("drop", "add", "replace", "move"), fc.jsonValue()).map(
    ([at, how, other]) => {
      const keys = Object.keys(record)
      const key = keys[at % keys.length]!
      const copy: Record<string, unknown> = { ...record }
      if (how === "drop") delete copy[key]
      if (how === "add") copy[`extra_${at}`] = other
      if (how === "replace") copy[key] = other
      if (how === "move") {
        const value = copy[key]
        delete copy[key]
        copy[key] = value
      }
      return copy
    }
  )
