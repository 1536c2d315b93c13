import { SchemaAST } from "effect"

type Primitive = "string" | "number" | "boolean"

/** The fields of a struct of required strings, numbers and booleans, by name and `typeof`. */
export type PlainFields = ReadonlyArray<readonly [string, Primitive]>

const primitiveOf = (ast: SchemaAST.AST): Primitive | undefined =>
  SchemaAST.isStringKeyword(ast)
    ? "string"
    : SchemaAST.isNumberKeyword(ast)
    ? "number"
    : SchemaAST.isBooleanKeyword(ast)
    ? "boolean"
    : undefined

/**
 * The fields of `ast` when it is a plain struct: required fields only, each a string, a number or a boolean
 * without refinement or transformation, no index signature, no parse options of its own. Undefined for any other
 * schema.
 */
export const plainFieldsOf = (ast: SchemaAST.AST): PlainFields | undefined => {
  if (!SchemaAST.isTypeLiteral(ast) || ast.indexSignatures.length > 0) return undefined
  if (SchemaAST.getParseOptionsAnnotation(ast)._tag === "Some") return undefined
  const fields: Array<readonly [string, Primitive]> = []
  for (const field of ast.propertySignatures) {
    const primitive = primitiveOf(field.type)
    if (typeof field.name !== "string" || field.isOptional || primitive === undefined) return undefined
    fields.push([field.name, primitive])
  }
  return fields
}

/**
 * What decoding `input` with the plain struct of `fields` (every error reported, an excess property an error)
 * gives when it succeeds: a new object with the fields in the struct's order. Undefined when it would fail:
 * the decoder itself then says why. A struct of plain fields is what most tools take, and the decoder's general
 * walk costs about four times these checks.
 */
export const decodePlain = (fields: PlainFields, input: unknown): Record<string, unknown> | undefined => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return undefined
  // Every own key, as the decoder counts them (Reflect.ownKeys, several times slower than these two together).
  if (Object.getOwnPropertyNames(input).length !== fields.length) return undefined
  if (Object.getOwnPropertySymbols(input).length > 0) return undefined
  const record = input as Record<string, unknown>
  const output: Record<string, unknown> = {}
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!
    const name = field[0]
    if (!Object.hasOwn(record, name)) return undefined
    const value = record[name]
    if (typeof value !== field[1]) return undefined
    output[name] = value
  }
  return output
}
