import { JSONSchema, ParseResult } from "effect"
import type { Schema } from "effect"
import { cutAt } from "./Text.js"

type JsonSchema = Readonly<Record<string, unknown>>

const inlineRefs = (node: unknown, defs: Readonly<Record<string, unknown>>): unknown => {
  if (Array.isArray(node)) return node.map((item) => inlineRefs(item, defs))
  if (node === null || typeof node !== "object") return node
  const { $ref, title: _title, ...rest } = node as Record<string, unknown>
  const base = typeof $ref === "string" ? inlineRefs(defs[$ref.replace("#/$defs/", "")], defs) as object : {}
  const out: Record<string, unknown> = { ...base }
  for (const [key, value] of Object.entries(rest)) {
    out[key] = key === "properties" && value !== null && typeof value === "object"
      ? Object.fromEntries(Object.entries(value).map(([name, property]) => [name, inlineRefs(property, defs)]))
      : inlineRefs(value, defs)
  }
  delete out.title
  return out
}

/** The JSON Schema of a tool's parameters, as shown to the model: self-contained, always an object. */
export const parametersJsonSchema = (schema: Schema.Schema.AnyNoContext): JsonSchema => {
  const { $schema: _s, $id: _i, $defs, ...rest } = JSONSchema.make(schema) as unknown as Record<string, unknown>
  if (rest.type !== "object") return { type: "object", properties: {}, additionalProperties: false }
  return inlineRefs(rest, ($defs ?? {}) as Record<string, unknown>) as JsonSchema
}

/** A compact, TypeScript-like rendering for error messages: `{ "path": string, "max_bytes"?: integer }`. */
export const describeSchema = (schema: JsonSchema): string => {
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(" | ")
  if ("const" in schema) return JSON.stringify(schema.const)
  for (const key of ["anyOf", "oneOf"] as const) {
    const options = schema[key]
    if (Array.isArray(options)) return options.map((o: JsonSchema) => describeSchema(o)).join(" | ")
  }
  switch (schema.type) {
    case "object": {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>
      const required = new Set((schema.required ?? []) as ReadonlyArray<string>)
      const fields = Object.entries(properties).map(([name, s]) =>
        `${JSON.stringify(name)}${required.has(name) ? "" : "?"}: ${describeSchema(s)}`
      )
      return fields.length === 0 ? "{}" : `{ ${fields.join(", ")} }`
    }
    case "array":
      return `${describeSchema((schema.items ?? {}) as JsonSchema)}[]`
    case undefined:
      return "any"
    default:
      return String(schema.type)
  }
}

const describeValue = (value: unknown): string => {
  const json = JSON.stringify(value)
  return json === undefined ? String(value) : json.length > 60 ? `${cutAt(json, 57)}...` : json
}

/** One line per problem, naming the argument: missing, unexpected, or of the wrong type. */
export const describeParseError = (error: ParseResult.ParseError, input: unknown): ReadonlyArray<string> => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  const key = (issue: (typeof issues)[number]) => issue.path.map(String).join(".")
  // An optional field of the wrong type fails both members of `T | undefined`: the "undefined" half is noise.
  const relevant = issues.filter((issue) =>
    !(issue.message.startsWith("Expected undefined") &&
      issues.some((other) => other !== issue && key(other) === key(issue)))
  )
  return relevant.map((issue) => {
    const name = issue.path.map(String).join(".")
    if (name === "") {
      return `- Arguments: expected an object, got ${describeValue(input)}`
    }
    switch (issue._tag) {
      case "Missing":
        return `- Argument "${name}": missing (required)`
      case "Unexpected":
        return `- Argument "${name}": not in the schema`
      default:
        return `- Argument "${name}": ${issue.message}`
    }
  })
}

export const levenshtein = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}

export const nearest = (name: string, candidates: ReadonlyArray<string>): string | undefined => {
  let best: string | undefined
  let bestDistance = Infinity
  for (const candidate of candidates) {
    const d = levenshtein(name.toLowerCase(), candidate.toLowerCase())
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  return best
}
