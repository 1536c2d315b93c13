import { FileSystem } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Schema } from "effect"
import type { Tool } from "../../src/domain/Tool.js"
import {
  describeParseError,
  describeSchema,
  levenshtein,
  nearest,
  parametersJsonSchema
} from "../../src/domain/ToolValidation.js"
import { makeFsTools } from "../../src/layers/tools/FsTools.js"
import { Workspace } from "../../src/services/Workspace.js"

/** The real fs tools; building them touches neither the workspace nor the file system. */
const fsTools = makeFsTools.pipe(
  Effect.provide(Layer.mock(Workspace, { root: "/nowhere" })),
  Effect.provide(FileSystem.layerNoop({}))
)
const byName = (tools: ReadonlyArray<Tool>, name: string) => tools.find((tool) => tool.name === name)!

const problems = (schema: Schema.Schema.AnyNoContext, input: unknown): ReadonlyArray<string> => {
  const decoded = Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "error" })(input)
  assert.isTrue(Either.isLeft(decoded), "the input should not decode")
  return Either.isLeft(decoded) ? describeParseError(decoded.left, input) : []
}

const hasNoRefs = (node: unknown): boolean => !JSON.stringify(node).match(/"\$(ref|defs|schema|id)"/)

describe("parametersJsonSchema and describeSchema", () => {
  it.effect("renders fs_read's parameters compactly", () =>
    Effect.gen(function*() {
      const fsRead = byName(yield* fsTools, "fs_read")
      const json = parametersJsonSchema(fsRead.parameters)
      assert.strictEqual(describeSchema(json), "{ \"path\": string, \"max_bytes\"?: integer }")
    }))

  it.effect("is a self-contained object schema for every built-in tool", () =>
    Effect.gen(function*() {
      for (const tool of yield* fsTools) {
        const json = parametersJsonSchema(tool.parameters)
        assert.strictEqual(json.type, "object", tool.name)
        assert.isTrue(hasNoRefs(json), `${tool.name}: ${JSON.stringify(json)}`)
      }
    }))

  it.effect("inlines refinements (no $ref, $defs or $schema) and keeps their constraints", () =>
    Effect.sync(() => {
      const json = parametersJsonSchema(Schema.Struct({ n: Schema.Int.pipe(Schema.positive()) }))
      assert.isTrue(hasNoRefs(json), JSON.stringify(json))
      const n = (json.properties as Record<string, Record<string, unknown>>).n!
      assert.strictEqual(n.type, "integer")
      assert.strictEqual(n.exclusiveMinimum, 0)
      assert.deepStrictEqual(json.required, ["n"])
    }))

  it.effect("gives an empty struct an empty object schema", () =>
    Effect.sync(() => {
      const json = parametersJsonSchema(Schema.Struct({}))
      assert.deepStrictEqual(json, { type: "object", properties: {}, additionalProperties: false })
      assert.strictEqual(describeSchema(json), "{}")
    }))

  it.effect("keeps a parameter whose name is a JSON Schema keyword (title, description)", () =>
    Effect.sync(() => {
      const json = parametersJsonSchema(
        Schema.Struct({ title: Schema.String, description: Schema.optional(Schema.String) })
      )
      const properties = json.properties as Record<string, unknown>
      assert.deepStrictEqual(Object.keys(properties).sort(), ["description", "title"])
      assert.strictEqual(describeSchema(json), "{ \"title\": string, \"description\"?: string }")
    }))

  it.effect("renders literals, arrays and unions", () =>
    Effect.sync(() => {
      const json = parametersJsonSchema(Schema.Struct({
        mode: Schema.Literal("a", "b"),
        tags: Schema.Array(Schema.String),
        limit: Schema.Union(Schema.Number, Schema.Null)
      }))
      assert.strictEqual(
        describeSchema(json),
        "{ \"mode\": \"a\" | \"b\", \"tags\": string[], \"limit\": number | null }"
      )
    }))
})

describe("describeParseError", () => {
  const params = Schema.Struct({ path: Schema.String, max_bytes: Schema.optional(Schema.Int) })

  it.effect("names a missing field", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(problems(params, {}), ["- Argument \"path\": missing (required)"])
    }))

  it.effect("names a wrongly typed field and what it got", () =>
    Effect.sync(() => {
      const [line, ...rest] = problems(params, { path: 42 })
      assert.deepStrictEqual(rest, [])
      assert.match(line!, /^- Argument "path": Expected string, actual 42$/)
    }))

  it.effect("an optional field of the wrong type gets one line, without the `undefined` half of its union", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(problems(params, { path: "a", max_bytes: "ten" }), [
        "- Argument \"max_bytes\": Expected number, actual \"ten\""
      ])
    }))

  it.effect("names an unexpected field", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(problems(params, { path: "a", file: "b" }), ["- Argument \"file\": not in the schema"])
    }))

  it.effect("reports every problem at once, one line each", () =>
    Effect.sync(() => {
      const lines = problems(params, { max_bytes: "ten", extra: true })
      assert.isTrue(lines.some((line) => line.startsWith("- Argument \"path\": missing")))
      assert.isTrue(lines.some((line) => line.startsWith("- Argument \"max_bytes\": Expected")))
      assert.isTrue(lines.some((line) => line.startsWith("- Argument \"extra\": not in the schema")))
    }))

  it.effect("says when the arguments are not an object at all", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(problems(params, "fs_read notes.md"), [
        "- Arguments: expected an object, got \"fs_read notes.md\""
      ])
    }))
})

describe("nearest", () => {
  const names = ["fs_read", "fs_list", "fs_write", "now"]

  it.effect("finds the closest tool name, ignoring case", () =>
    Effect.sync(() => {
      assert.strictEqual(nearest("fs_reed", names), "fs_read")
      assert.strictEqual(nearest("FS_WRITE", names), "fs_write")
      assert.strictEqual(nearest("list", names), "fs_list")
      assert.isUndefined(nearest("x", []))
    }))

  it.effect("levenshtein counts edits", () =>
    Effect.sync(() => {
      assert.strictEqual(levenshtein("kitten", "sitting"), 3)
      assert.strictEqual(levenshtein("", "abc"), 3)
      assert.strictEqual(levenshtein("same", "same"), 0)
    }))
})
