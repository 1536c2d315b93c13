import { assert, describe, it } from "@effect/vitest"
import { Either, FastCheck as fc, Schema } from "effect"
import { decodePlain, plainFieldsOf } from "../../src/domain/PlainStruct.js"
import { defineTool } from "../../src/domain/Tool.js"

const Plain = Schema.Struct({ path: Schema.String, count: Schema.Number, force: Schema.Boolean })
const decodeAll = Schema.decodeUnknownEither(Plain, { errors: "all", onExcessProperty: "error" })

describe("plainFieldsOf", () => {
  it("a struct of required strings, numbers and booleans: its fields, in order", () => {
    assert.deepStrictEqual(plainFieldsOf(Plain.ast), [["path", "string"], ["count", "number"], ["force", "boolean"]])
    assert.deepStrictEqual(plainFieldsOf(Schema.Struct({}).ast), [])
  })

  it("any other schema: none (the decoder decides)", () => {
    const others = [
      Schema.Struct({ path: Schema.optional(Schema.String) }),
      Schema.Struct({ count: Schema.Number.pipe(Schema.int()) }),
      Schema.Struct({ count: Schema.NumberFromString }),
      Schema.Struct({ nested: Schema.Struct({ a: Schema.String }) }),
      Schema.Struct({ mode: Schema.Literal("a", "b") }),
      Schema.Struct({ a: Schema.String }, Schema.Record({ key: Schema.String, value: Schema.Number })),
      Schema.Struct({ a: Schema.String }).pipe(Schema.filter(() => true)),
      Schema.Struct({ a: Schema.String }).annotations({ parseOptions: { onExcessProperty: "preserve" } }),
      Schema.Record({ key: Schema.String, value: Schema.String }),
      Schema.String
    ]
    for (const schema of others) assert.isUndefined(plainFieldsOf(schema.ast), String(schema))
  })
})

describe("decodePlain", () => {
  const fields = plainFieldsOf(Plain.ast)!
  // Objects near the struct's shape (its keys, some missing, some extra, values of any kind) and anything else.
  const nearly = fc.oneof(
    fc.record(
      {
        path: fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
        count: fc.oneof(fc.double(), fc.string(), fc.boolean()),
        force: fc.oneof(fc.boolean(), fc.constant(0), fc.constant(undefined)),
        extra: fc.anything()
      },
      { requiredKeys: [] }
    ),
    fc.record({ force: fc.boolean(), count: fc.double(), path: fc.string() }),
    fc.anything()
  )

  it("gives what the decoder gives when it succeeds, and nothing when it fails", () => {
    fc.assert(
      fc.property(nearly, (input) => {
        const decoded = decodeAll(input)
        const checked = decodePlain(fields, input)
        if (Either.isRight(decoded)) {
          assert.deepStrictEqual(checked, decoded.right)
          assert.deepStrictEqual(Object.keys(checked!), ["path", "count", "force"], "in the struct's order")
        } else {
          assert.isUndefined(checked)
        }
      }),
      { numRuns: 2000 }
    )
  })

  it("refuses what only looks like the struct: inherited fields, a symbol key, a hidden key, an array", () => {
    const hidden = Object.defineProperty({ path: "a", count: 1, force: true }, "hidden", { value: 1 })
    assert.isTrue(Either.isLeft(decodeAll(hidden)), "the decoder counts it as an excess property")
    assert.isUndefined(decodePlain(fields, hidden))
    assert.isUndefined(decodePlain(fields, Object.create({ path: "a", count: 1, force: true })))
    assert.isUndefined(
      decodePlain(fields, Object.assign(Object.create({ force: true }), { path: "a", count: 1, x: 1 }))
    )
    assert.isUndefined(decodePlain(fields, { path: "a", count: 1, force: true, [Symbol("x")]: 1 }))
    assert.isUndefined(decodePlain(plainFieldsOf(Schema.Struct({}).ast)!, []))
    assert.deepStrictEqual(decodePlain(fields, { force: false, path: "", count: Number.NaN }), {
      path: "",
      count: Number.NaN,
      force: false
    })
  })
})

describe("a tool of plain parameters", () => {
  const tool = defineTool({
    name: "add",
    description: "Adds.",
    parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
    hasSideEffects: false,
    external: false,
    run: async ({ a, b }) => ({ status: "success", content: String(a + b) })
  })

  it("prepares valid arguments as the decoder would, and reports invalid ones as it does", () => {
    const prepared = tool.prepare({ b: 2, a: 1 })
    assert.isTrue(Either.isRight(prepared))
    if (Either.isRight(prepared)) {
      assert.deepStrictEqual(prepared.right.args, { a: 1, b: 2 })
      assert.strictEqual(prepared.right.summary, "add {\"a\":1,\"b\":2}")
    }
    const invalid = tool.prepare({ a: 1, b: "2", c: 3 })
    assert.isTrue(Either.isLeft(invalid))
    if (Either.isLeft(invalid)) {
      assert.include(invalid.left.message, "b")
      assert.include(invalid.left.message, "c")
    }
  })
})
