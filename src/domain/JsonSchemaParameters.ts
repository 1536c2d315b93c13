import { Schema } from "effect"

type JsonSchema = Readonly<Record<string, unknown>>

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value)

const definitionName = (ref: string): string | undefined => /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref)?.[1]

const inline = (node: unknown, defs: Readonly<Record<string, unknown>>, expanding: ReadonlySet<string>): unknown => {
  if (Array.isArray(node)) return node.map((item) => inline(item, defs, expanding))
  if (!isObject(node)) return node
  const { $ref, ...rest } = node
  const name = typeof $ref === "string" ? definitionName($ref) : undefined
  // A recursive definition is shown (and validated) as "any value" past its first level.
  const base = name === undefined || expanding.has(name) || !isObject(defs[name])
    ? {}
    : inline(defs[name], defs, new Set([...expanding, name])) as Record<string, unknown>
  const out: Record<string, unknown> = { ...base }
  for (const [key, value] of Object.entries(rest)) {
    out[key] = key === "properties" && isObject(value)
      ? Object.fromEntries(Object.entries(value).map(([field, property]) => [field, inline(property, defs, expanding)]))
      : inline(value, defs, expanding)
  }
  return out
}

/** A server-provided JSON Schema as shown to the model: self-contained (references inlined), always an object. */
export const selfContainedJsonSchema = (raw: unknown): JsonSchema => {
  if (!isObject(raw)) return { type: "object", properties: {} }
  const { $schema: _s, $id: _i, $defs, definitions, ...rest } = raw
  const defs = { ...(isObject(definitions) ? definitions : {}), ...(isObject($defs) ? $defs : {}) }
  const schema = inline(rest, defs, new Set()) as Record<string, unknown>
  return schema.type === "object" ? schema : { properties: {}, ...schema, type: "object" }
}

const literalValues = (values: ReadonlyArray<unknown>) =>
  values.every((v) => v === null || ["string", "number", "boolean"].includes(typeof v))
    ? values as ReadonlyArray<string | number | boolean | null>
    : undefined

const ofType = (type: string, schema: JsonSchema): Schema.Schema.AnyNoContext => {
  switch (type) {
    case "string": {
      let s: Schema.Schema<string> = Schema.String
      if (typeof schema.minLength === "number") s = s.pipe(Schema.minLength(schema.minLength))
      if (typeof schema.maxLength === "number") s = s.pipe(Schema.maxLength(schema.maxLength))
      if (typeof schema.pattern === "string") {
        try {
          s = s.pipe(Schema.pattern(new RegExp(schema.pattern, "u")))
        } catch {
          // A pattern JavaScript cannot compile is left to the server to check.
        }
      }
      return s
    }
    case "number":
    case "integer": {
      let n: Schema.Schema<number> = type === "integer" ? Schema.Int : Schema.Number
      if (typeof schema.minimum === "number") n = n.pipe(Schema.greaterThanOrEqualTo(schema.minimum))
      if (typeof schema.maximum === "number") n = n.pipe(Schema.lessThanOrEqualTo(schema.maximum))
      if (typeof schema.exclusiveMinimum === "number") n = n.pipe(Schema.greaterThan(schema.exclusiveMinimum))
      if (typeof schema.exclusiveMaximum === "number") n = n.pipe(Schema.lessThan(schema.exclusiveMaximum))
      return n
    }
    case "boolean":
      return Schema.Boolean
    case "null":
      return Schema.Null
    case "array": {
      const items = isObject(schema.items) ? toEffectSchema(schema.items) : Schema.Unknown
      let a: Schema.Schema<ReadonlyArray<unknown>> = Schema.Array(items)
      if (typeof schema.minItems === "number") a = a.pipe(Schema.minItems(schema.minItems))
      if (typeof schema.maxItems === "number") a = a.pipe(Schema.maxItems(schema.maxItems))
      return a
    }
    case "object": {
      const properties = isObject(schema.properties) ? schema.properties : {}
      const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : [])
      const fields: Record<string, Schema.Schema.AnyNoContext | Schema.optional<Schema.Schema.AnyNoContext>> = {}
      for (const [name, property] of Object.entries(properties)) {
        const field = isObject(property) ? toEffectSchema(property) : Schema.Unknown
        fields[name] = required.has(name) ? field : Schema.optional(field)
      }
      const extra = schema.additionalProperties
      if (extra === false) return Schema.Struct(fields)
      const value = isObject(extra) ? toEffectSchema(extra) : Schema.Unknown
      return Schema.Struct(fields, Schema.Record({ key: Schema.String, value }))
    }
    default:
      return Schema.Unknown
  }
}

/**
 * An Effect Schema that checks what a JSON Schema (its references inlined) says about a value, so that a call to
 * a tool that brings its own JSON Schema is validated, and its problems worded, like any other. The common
 * keywords are checked (types, properties, required, additionalProperties, items, enum, const, anyOf/oneOf,
 * bounds, lengths, patterns); the rest is left to the tool's owner.
 */
export const toEffectSchema = (schema: JsonSchema): Schema.Schema.AnyNoContext => {
  if ("const" in schema) {
    const values = literalValues([schema.const])
    if (values !== undefined) return Schema.Literal(...values)
  }
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    const values = literalValues(schema.enum)
    if (values !== undefined) return Schema.Literal(...values)
  }
  for (const key of ["anyOf", "oneOf"] as const) {
    const options = schema[key]
    if (Array.isArray(options) && options.length > 0) {
      return Schema.Union(...options.map((o) => (isObject(o) ? toEffectSchema(o) : Schema.Unknown)))
    }
  }
  const type = schema.type
  if (Array.isArray(type) && type.length > 0) {
    return Schema.Union(...type.map((t) => ofType(String(t), schema)))
  }
  if (typeof type === "string") return ofType(type, schema)
  return isObject(schema.properties) ? ofType("object", schema) : Schema.Unknown
}
