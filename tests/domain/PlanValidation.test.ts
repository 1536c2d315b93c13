import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { type Plan, resolveArgs, type StepOutput } from "../../src/domain/Plan.js"
import { validatePlan } from "../../src/domain/PlanValidation.js"
import { defineTool, type Tool } from "../../src/domain/Tool.js"

const ok = () => Effect.succeed({ status: "success", content: "ok" } as const)
const findFiles = defineTool({
  name: "find_files",
  description: "Find files.",
  parameters: Schema.Struct({ pattern: Schema.String }),
  result: Schema.Struct({ first: Schema.String, count: Schema.Number }),
  hasSideEffects: false,
  external: false,
  execute: ok
})
const readFile = defineTool({
  name: "read_file",
  description: "Read a file.",
  parameters: Schema.Struct({ path: Schema.String }),
  hasSideEffects: false,
  external: false,
  execute: ok
})
const repeat = defineTool({
  name: "repeat",
  description: "Repeat a text n times.",
  parameters: Schema.Struct({ text: Schema.String, times: Schema.Number }),
  hasSideEffects: false,
  external: false,
  execute: ok
})
const catalog: ReadonlyArray<Tool> = [findFiles, readFile, repeat]
const find = (name: string) => catalog.find((tool) => tool.name === name)
const validate = (steps: Plan["steps"], maxSteps = 10) => validatePlan({ steps }, find, maxSteps)

describe("the plan validator", () => {
  it("accepts references to earlier steps, by field and by whole result, of the right types", () => {
    assert.deepStrictEqual(
      validate([
        { tool: "find_files", args: { pattern: "*.md" } },
        { tool: "read_file", args: { path: "{{step1.first}}" } },
        { tool: "repeat", args: { text: { from_step: 2 }, times: "{{step1.count}}" } }
      ]),
      []
    )
  })

  it("rejects an unknown tool, naming the step", () => {
    assert.deepStrictEqual(validate([{ tool: "find_files", args: { pattern: "*" } }, { tool: "rm_rf", args: {} }]), [
      "step 2: unknown tool \"rm_rf\""
    ])
  })

  it("rejects arguments outside the tool's schema, after the references stand for their values", () => {
    const [literal] = validate([{ tool: "read_file", args: { path: "a", mode: "w" } }])
    assert.include(literal!, "step 1: arguments outside read_file's schema")
    assert.include(literal!, "\"mode\": not in the schema")
    // `first` is a string where `times` needs a number.
    const [typed] = validate([
      { tool: "find_files", args: { pattern: "*" } },
      { tool: "repeat", args: { text: "a", times: "{{step1.first}}" } }
    ])
    assert.include(typed!, "step 2: arguments outside repeat's schema")
    assert.include(typed!, "\"times\"")
  })

  it("rejects a reference to the same or a later step", () => {
    assert.deepStrictEqual(validate([{ tool: "read_file", args: { path: "{{step1.content}}" } }]), [
      "step 1: refers to step 1, which is not an earlier step"
    ])
    assert.deepStrictEqual(
      validate([{ tool: "repeat", args: { text: { from_step: 2 }, times: 1 } }, {
        tool: "read_file",
        args: { path: "a" }
      }]),
      ["step 1: refers to step 2, which is not an earlier step"]
    )
  })

  it("rejects a field the producer's result does not have", () => {
    const [problem] = validate([
      { tool: "read_file", args: { path: "a" } },
      { tool: "read_file", args: { path: "{{step1.first}}" } }
    ])
    assert.strictEqual(problem, "step 2: step 1's result (read_file) has no field \"first\" (it has content, status)")
  })

  it("rejects a plan longer than maxSteps", () => {
    const step = { tool: "read_file", args: { path: "a" } }
    assert.deepStrictEqual(validate([step, step, step], 2), [
      "step 3: the plan has 3 steps, more than maxSteps (2)"
    ])
  })
})

describe("resolving references at run time", () => {
  const output = (tool: Tool, status: "success" | "empty", content: string): StepOutput => ({
    tool,
    result: { status, content }
  })

  it("passes the producer's values", () => {
    const resolved = resolveArgs({ path: "{{step1.first}}", note: "n={{step1.count}}" }, 2, [
      output(findFiles, "success", JSON.stringify({ first: "a.md", count: 2 }))
    ])
    assert.deepStrictEqual(resolved, Either.right({ path: "a.md", note: "n=2" }))
  })

  it("a producer that returned nothing makes its consumer fail, naming both steps", () => {
    const resolved = resolveArgs({ text: { from_step: 1 }, times: 1 }, 2, [output(readFile, "empty", "")])
    assert.deepStrictEqual(
      resolved,
      Either.left(
        "step 2: step 1 (read_file) returned nothing (empty), so there is nothing to pass on; an older result is " +
          "never used instead"
      )
    )
  })
})
