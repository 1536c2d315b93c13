import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Either, FastCheck as fc, Schema } from "effect"
import {
  AuditRecord,
  decodeAuditRecord,
  isExactAuditRecord,
  isExactSealedRecord,
  Sealed
} from "../../src/domain/AuditRecord.js"
import { declaredCheck, exactCheck } from "../../src/domain/ExactCheck.js"
import { mutated } from "../support/Mutations.js"

/** What the check promises: when it holds, decoding succeeds and gives back the same JSON, byte for byte. */
const assertSound = (schema: Schema.Schema.AnyNoContext, value: unknown) => {
  if (!exactCheck(schema.ast)(value)) return false
  const decoded = Schema.decodeUnknownEither(schema)(value)
  assert.isTrue(Either.isRight(decoded), `held for a value decoding refuses: ${JSON.stringify(value)}`)
  if (Either.isRight(decoded)) assert.strictEqual(JSON.stringify(decoded.right), JSON.stringify(value))
  return true
}

// Fixed seeds: the same values on every run (a failure names its seed and path to replay it).
describe("exactCheck", () => {
  it("holds for every record of every kind the audit schema generates, each decoding to itself", () => {
    fc.assert(
      fc.property(Arbitrary.make(AuditRecord), (record) => {
        assert.isTrue(isExactAuditRecord(record), JSON.stringify(record))
        const decoded = decodeAuditRecord(record)
        assert.isTrue(Either.isRight(decoded) && JSON.stringify(decoded.right) === JSON.stringify(record))
      }),
      { numRuns: 500, seed: 12 }
    )
  })

  it("never holds for a changed audit record that decoding would refuse or rewrite", () => {
    let held = 0
    let refused = 0
    fc.assert(
      fc.property(
        Arbitrary.make(AuditRecord).chain((record) => mutated(record as unknown as Record<string, unknown>)),
        (record) => {
          if (assertSound(AuditRecord, record)) held++
          else refused++
        }
      ),
      { numRuns: 2000, seed: 12 }
    )
    // Both sides are exercised: some changes keep a record exact (a replaced value of the right type), most not.
    assert.isAbove(held, 0)
    assert.isAbove(refused, 0)
  })

  it("holds for every record as the log stores it (its fields, then the seal's), as decoding the two gives it", () => {
    const stored = Schema.extend(AuditRecord, Sealed)
    // What reading a stored line decodes, when the check does not hold: the record, then its seal.
    const decodedLine = (json: unknown) => {
      const record = decodeAuditRecord(json)
      const sealed = Schema.decodeUnknownEither(Sealed)(json)
      return Either.isRight(record) && Either.isRight(sealed) ? { ...record.right, ...sealed.right } : undefined
    }
    fc.assert(
      fc.property(Arbitrary.make(stored), (line) => {
        assert.isTrue(isExactSealedRecord(line), JSON.stringify(line))
        assert.strictEqual(JSON.stringify(decodedLine(line)), JSON.stringify(line))
      }),
      { numRuns: 500, seed: 12 }
    )
    let held = 0
    let refused = 0
    fc.assert(
      fc.property(
        Arbitrary.make(stored).chain((line) => mutated(line as unknown as Record<string, unknown>)),
        (line) => {
          if (!isExactSealedRecord(line)) return void refused++
          held++
          assert.strictEqual(
            JSON.stringify(decodedLine(line)),
            JSON.stringify(line),
            "held for a line decoding rewrites"
          )
        }
      ),
      { numRuns: 2000, seed: 12 }
    )
    assert.isAbove(held, 0)
    assert.isAbove(refused, 0)
    const line = { ...fc.sample(Arbitrary.make(stored), { numRuns: 1, seed: 12 })[0]! }
    const { sig, ...unsigned } = line
    assert.isFalse(isExactSealedRecord(unsigned), "a line without its signature is not a stored record")
    assert.isFalse(isExactSealedRecord({ sig, ...unsigned }), "the seal comes after the record's fields")
  })

  it("is sound for any JSON value against small schemas of every supported kind", () => {
    const schemas: ReadonlyArray<Schema.Schema.AnyNoContext> = [
      Schema.Struct({ a: Schema.Number, b: Schema.optional(Schema.String), c: Schema.NullOr(Schema.Boolean) }),
      Schema.Array(Schema.Struct({ name: Schema.String.pipe(Schema.minLength(2)) })),
      Schema.Union(Schema.Literal("x", "y"), Schema.Number, Schema.Struct({ k: Schema.Literal(1) })),
      Schema.Union(
        Schema.Struct({ tag: Schema.Literal("a"), n: Schema.Number }),
        Schema.Struct({ tag: Schema.Literal("b", "c"), s: Schema.String })
      )
    ]
    // Schemas it vouches for only in part: its verdicts must still be sound.
    const partly: ReadonlyArray<Schema.Schema.AnyNoContext> = [
      Schema.Union(Schema.NumberFromString, Schema.String, Schema.Number),
      Schema.Struct({ a: Schema.Union(Schema.Trim, Schema.Literal("x")), b: Schema.optional(Schema.String) })
    ]
    for (const schema of partly) {
      fc.assert(fc.property(fc.jsonValue(), (value) => void assertSound(schema, value)), { numRuns: 500, seed: 12 })
    }
    for (const schema of schemas) {
      fc.assert(fc.property(fc.jsonValue(), (value) => void assertSound(schema, value)), { numRuns: 500, seed: 12 })
      fc.assert(
        fc.property(Arbitrary.make(schema), (value) => assert.isTrue(assertSound(schema, value))),
        { numRuns: 200, seed: 12 }
      )
    }
  })

  it("holds only for plain objects with their declared properties, in the schema's order", () => {
    const check = exactCheck(Schema.Struct({ a: Schema.Number, b: Schema.optional(Schema.String) }).ast)
    assert.isTrue(check({ a: 1, b: "x" }))
    assert.isTrue(check({ a: 1 }), "an optional property may be missing")
    assert.isTrue(check(Object.assign(Object.create(null), { a: 1 })))
    assert.isFalse(check({ b: "x" }), "a required property is missing")
    assert.isFalse(check({ b: "x", a: 1 }), "decoding writes them in the schema's order")
    assert.isFalse(check({ a: 1, c: 2 }), "decoding drops an undeclared property")
    assert.isFalse(check({ a: "1" }))
    class Point {
      a = 1
    }
    assert.isFalse(check(new Point()), "decoding gives a plain object for an instance")
    assert.isFalse(check([1]))
    assert.isFalse(check(null))
  })

  it("declaredCheck: a struct's declared properties, in any order, whatever else the object holds", () => {
    const schema = Schema.Struct({ a: Schema.Number, b: Schema.optional(Schema.String), c: Schema.Literal("x") })
    const check = declaredCheck(schema.ast)
    assert.isTrue(check({ c: "x", extra: [1], a: 1 }))
    assert.isTrue(check({ a: 1, b: "y", c: "x" }))
    assert.isFalse(check({ a: 1 }), "a required property is missing")
    assert.isFalse(check({ a: 1, b: 2, c: "x" }))
    assert.isFalse(check({ a: 1, c: "y" }))
    assert.isFalse(check([1]))
    assert.isFalse(declaredCheck(Schema.Struct({ d: Schema.Date }).ast)({ d: new Date(0) }), "a transformation")
    assert.isFalse(declaredCheck(Schema.String.ast)("x"), "not a struct")
    // Sound: when it holds, decoding gives back each declared property's value.
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom("a", "b", "c", "d"), fc.jsonValue()), (value) => {
        if (!check(value)) return
        const decoded = Schema.decodeUnknownEither(schema)(value)
        assert.isTrue(Either.isRight(decoded))
        if (Either.isRight(decoded)) {
          for (const key of Object.keys(decoded.right)) {
            assert.strictEqual((decoded.right as Record<string, unknown>)[key], value[key])
          }
        }
      }),
      { numRuns: 2000, seed: 12 }
    )
  })

  it("checks a refinement with its own filter", () => {
    const check = exactCheck(Schema.String.pipe(Schema.pattern(/^\d+$/)).ast)
    assert.isTrue(check("42"))
    assert.isFalse(check("4x"))
  })

  it("never holds where it cannot vouch for the decoded value", () => {
    const unsure = [
      Schema.NumberFromString,
      Schema.Date,
      Schema.Record({ key: Schema.String, value: Schema.Number }),
      Schema.Tuple(Schema.String, Schema.Number),
      // Two structs no tag tells apart: decoding takes the first that accepts, dropping what it does not declare.
      Schema.Union(Schema.Struct({ a: Schema.Number }), Schema.Struct({ a: Schema.Number, b: Schema.Number })),
      Schema.Struct({ a: Schema.optionalWith(Schema.Number, { default: () => 0 }) })
    ] as const
    const values = ["1", new Date(0), { x: 1 }, ["a", 1], { a: 1, b: 2 }, { a: 1 }]
    unsure.forEach((schema, i) => assert.isFalse(exactCheck(schema.ast)(values[i]), String(schema)))
  })

  it("never holds for a union with a member it cannot vouch for, which may take a value first", () => {
    // Decoding "1" takes the first member that accepts it: the number 1, not the string.
    const transformed = Schema.Union(Schema.NumberFromString, Schema.String)
    assert.isTrue(Either.isRight(Schema.decodeUnknownEither(transformed)("1")))
    assert.isFalse(exactCheck(transformed.ast)("1"))
    assert.isFalse(exactCheck(transformed.ast)("text"))
    const untagged = Schema.Union(
      Schema.String,
      Schema.Struct({ a: Schema.Number }),
      Schema.Struct({ a: Schema.Number })
    )
    assert.isFalse(exactCheck(untagged.ast)("text"))
    assert.isFalse(exactCheck(untagged.ast)({ a: 1 }))
  })
})
