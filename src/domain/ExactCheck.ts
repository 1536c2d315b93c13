import { Option, type SchemaAST as AST } from "effect"

/**
 * A plain predicate made from a schema's AST, for values a program builds itself and then validates on a hot
 * path: when it holds, decoding the value succeeds and gives the value back unchanged (the same properties, in the
 * same order, holding the same values), so the value can stand for its decoded copy and the decoding is skipped.
 * When it does not hold, nothing is known: decode, for the decoded value or for the error that names what is
 * wrong. It is made to err on that side only: a part of the AST it cannot vouch for (a transformation, a
 * declaration, a suspension, an index signature, a union whose decoding could pick one of several object
 * members, ...) never holds.
 *
 * Decoding copies the value (each object and array anew, properties in the schema's order, undeclared ones
 * dropped), which is most of its cost; this walk allocates nothing. Values compared as decoding gives them:
 * objects are plain objects with no undeclared own enumerable property and their declared ones in the schema's
 * order; arrays are arrays; refinements are checked with their own filter.
 */
export type ExactCheck = (value: unknown) => boolean

const never: ExactCheck = () => false
const always: ExactCheck = () => true

/** The predicate of `ast`; see `ExactCheck`. */
export const exactCheck = (ast: AST.AST): ExactCheck => {
  switch (ast._tag) {
    case "StringKeyword":
      return (value) => typeof value === "string"
    case "NumberKeyword":
      return (value) => typeof value === "number"
    case "BooleanKeyword":
      return (value) => typeof value === "boolean"
    case "UndefinedKeyword":
      return (value) => value === undefined
    case "UnknownKeyword":
    case "AnyKeyword":
      return always
    case "Literal": {
      const literal = ast.literal
      return (value) => value === literal
    }
    case "Refinement": {
      const from = exactCheck(ast.from)
      if (from === never) return never
      return (value) => from(value) && Option.isNone(ast.filter(value, {}, ast))
    }
    case "TupleType":
      return arrayCheck(ast)
    case "TypeLiteral":
      return objectCheck(ast)
    case "Union":
      return unionCheck(ast)
    default:
      return never
  }
}

/**
 * The predicate of a struct's declared properties, whatever else the object holds: when it holds, decoding the
 * object (undeclared properties dropped) succeeds and gives back each declared property's value unchanged, so a
 * reader may take those values from the object as it is. Each property is vouched for as `exactCheck` vouches;
 * anything but a struct (or a struct with a property it cannot vouch for) never holds.
 */
export const declaredCheck = (ast: AST.AST): ExactCheck => {
  const properties = ast._tag === "TypeLiteral" ? propertiesOf(ast) : undefined
  if (properties === undefined) return never
  const { checks, names, optional } = properties
  return (value) => {
    if (!isPlainObject(value)) return false
    for (let i = 0; i < names.length; i++) {
      if (!Object.hasOwn(value, names[i]!)) {
        if (optional[i]) continue
        return false
      }
      if (!checks[i]!(value[names[i]!])) return false
    }
    return true
  }
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

/** `Schema.Array(item)`: an array whose every element holds; fixed elements (tuples) are not vouched for. */
const arrayCheck = (ast: AST.TupleType): ExactCheck => {
  if (ast.elements.length > 0 || ast.rest.length !== 1) return never
  const item = exactCheck(ast.rest[0]!.type)
  if (item === never) return never
  return (value) => {
    if (!Array.isArray(value)) return false
    for (let i = 0; i < value.length; i++) {
      if (!item(value[i])) return false
    }
    return true
  }
}

/**
 * A struct's properties in the schema's order, each name with its check and whether it may be missing; undefined
 * for a struct with an index signature or a property the checks cannot vouch for.
 */
const propertiesOf = (ast: AST.TypeLiteral) => {
  if (ast.indexSignatures.length > 0) return undefined
  const names: Array<string> = []
  const checks: Array<ExactCheck> = []
  const optional: Array<boolean> = []
  for (const property of ast.propertySignatures) {
    if (typeof property.name !== "string") return undefined
    const check = exactCheck(property.type)
    if (check === never) return undefined
    names.push(property.name)
    checks.push(check)
    optional.push(property.isOptional)
  }
  return { names, checks, optional }
}

/** A struct: the required properties present, none undeclared, all in the schema's order, each holding. */
const objectCheck = (ast: AST.TypeLiteral): ExactCheck => {
  const properties = propertiesOf(ast)
  if (properties === undefined) return never
  const { checks, names, optional } = properties
  const order = new Map(names.map((name, index) => [name, index]))
  return (value) => {
    if (!isPlainObject(value)) return false
    let previous = -1
    let present = 0
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue
      const index = order.get(key)
      if (index === undefined || index < previous) return false
      previous = index
      present++
      if (!checks[index]!(value[key])) return false
    }
    if (present === names.length) return true
    for (let i = 0; i < names.length; i++) {
      if (!optional[i] && !Object.hasOwn(value, names[i]!)) return false
    }
    return true
  }
}

/**
 * A value of a union decodes as the first member that accepts it, so every member must be one this check vouches
 * for: one it does not (a transformation, say) might take the value first and give back another. A primitive
 * member gives its value back whichever accepts it; of the members that accept objects, at most one may accept a
 * given value: a single one, or structs told apart by a property of literal values (a tag), none shared.
 */
const unionCheck = (ast: AST.Union): ExactCheck => {
  const primitives: Array<ExactCheck> = []
  const objects: Array<AST.AST> = []
  for (const member of ast.types) {
    const check = exactCheck(member)
    if (check === never) return never
    if (acceptsObjects(member)) objects.push(member)
    else primitives.push(check)
  }
  const anyPrimitive: ExactCheck = (value) => {
    for (const check of primitives) {
      if (check(value)) return true
    }
    return false
  }
  if (objects.length === 0) return anyPrimitive
  const objectMember = objects.length === 1 ? exactCheck(objects[0]!) : taggedCheck(objects)
  if (objectMember === never) return never
  return (value) => typeof value === "object" && value !== null ? objectMember(value) : anyPrimitive(value)
}

/** Whether decoding `ast` may accept an object or an array (anything unknown is taken to). */
const acceptsObjects = (ast: AST.AST): boolean => {
  switch (ast._tag) {
    case "StringKeyword":
    case "NumberKeyword":
    case "BooleanKeyword":
    case "UndefinedKeyword":
    case "Literal":
      return false
    case "Refinement":
      return acceptsObjects(ast.from)
    case "Union":
      return ast.types.some(acceptsObjects)
    default:
      return true
  }
}

/** The literal values a struct's property takes, when its type is made of literals only. */
const literalsOf = (ast: AST.AST): ReadonlyArray<AST.LiteralValue> | undefined => {
  if (ast._tag === "Literal") return [ast.literal]
  if (ast._tag !== "Union") return undefined
  const values: Array<AST.LiteralValue> = []
  for (const member of ast.types) {
    if (member._tag !== "Literal") return undefined
    values.push(member.literal)
  }
  return values
}

/** Structs told apart by one required property of literal values, each value naming one struct. */
const taggedCheck = (members: ReadonlyArray<AST.AST>): ExactCheck => {
  const structs: Array<AST.TypeLiteral> = []
  for (const member of members) {
    if (member._tag !== "TypeLiteral") return never
    structs.push(member)
  }
  for (const candidate of structs[0]!.propertySignatures) {
    const tag = candidate.name
    if (typeof tag !== "string") continue
    const byValue = new Map<AST.LiteralValue, ExactCheck>()
    let distinct = true
    for (const struct of structs) {
      const property = struct.propertySignatures.find((p) => p.name === tag)
      const values = property === undefined || property.isOptional ? undefined : literalsOf(property.type)
      if (values === undefined) {
        distinct = false
        break
      }
      const check = exactCheck(struct)
      for (const value of values) {
        if (byValue.has(value)) distinct = false
        byValue.set(value, check)
      }
      if (!distinct) break
    }
    if (!distinct) continue
    return (value) => {
      const check = byValue.get((value as Record<string, AST.LiteralValue>)[tag]!)
      return check !== undefined && check(value)
    }
  }
  return never
}
