import { assert, describe, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { selfContainedJsonSchema, toEffectSchema } from "../../src/domain/JsonSchemaParameters.js"
import { describeParseError } from "../../src/domain/ToolValidation.js"

const check = (jsonSchema: unknown, input: unknown) => {
  const schema = toEffectSchema(selfContainedJsonSchema(jsonSchema))
  const decoded = Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "error" })(input)
  return Either.isRight(decoded) ? [] : describeParseError(decoded.left, input)
}

describe("a tool's own JSON Schema", () => {
  it("is made self-contained for the model: $schema dropped, references inlined, recursion cut", () => {
    const schema = selfContainedJsonSchema({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { node: { $ref: "#/definitions/Node" } },
      definitions: {
        Node: { type: "object", properties: { name: { type: "string" }, child: { $ref: "#/definitions/Node" } } }
      }
    })
    assert.deepStrictEqual(schema, {
      type: "object",
      properties: {
        node: { type: "object", properties: { name: { type: "string" }, child: {} } }
      }
    })
    assert.deepStrictEqual(selfContainedJsonSchema(undefined), { type: "object", properties: {} })
  })

  it("validates like any tool: each problem names its argument", () => {
    const schema = {
      type: "object",
      properties: {
        query: { type: "string", minLength: 1 },
        limit: { type: "integer", minimum: 1, maximum: 50 },
        mode: { enum: ["fast", "deep"] },
        tags: { type: "array", items: { type: "string" } },
        note: { type: ["string", "null"] }
      },
      required: ["query"],
      additionalProperties: false
    }
    assert.deepStrictEqual(check(schema, { query: "x", limit: 5, mode: "fast", tags: ["a"], note: null }), [])
    const lines = check(schema, { limit: 0.5, mode: "slow", tags: [1], extra: true })
    const text = lines.join("\n")
    assert.include(text, "- Argument \"query\": missing (required)")
    assert.include(text, "- Argument \"limit\":")
    assert.include(text, "- Argument \"mode\":")
    assert.include(text, "- Argument \"tags.0\":")
    assert.include(text, "- Argument \"extra\": not in the schema")
    assert.strictEqual(check(schema, { query: "x", limit: 51 }).length, 1)
    assert.deepStrictEqual(check(schema, "nope"), ["- Arguments: expected an object, got \"nope\""])
  })

  it("lets through what the schema allows: extra properties unless forbidden, unknown keywords", () => {
    assert.deepStrictEqual(check({ type: "object", properties: { a: { type: "number" } } }, { a: 1, b: 2 }), [])
    assert.deepStrictEqual(check({ type: "object", properties: { a: { not: { type: "string" } } } }, { a: "x" }), [])
    assert.deepStrictEqual(
      check({ type: "object", properties: { a: { anyOf: [{ type: "number" }, { const: "all" }] } } }, {
        a: "all"
      }),
      []
    )
    assert.isAbove(
      check({ type: "object", properties: { a: { anyOf: [{ type: "number" }, { const: "all" }] } } }, {
        a: "some"
      }).length,
      0
    )
  })
})
