import { Either, JSONSchema } from "effect"
import type { Schema } from "effect"
import { BASE_FIELDS, type Plan, referencesOf } from "./Plan.js"
import type { Tool } from "./Tool.js"
import { describeParseError } from "./ToolValidation.js"

type Json = Readonly<Record<string, unknown>>

const jsonSchemaOf = (schema: Schema.Schema.AnyNoContext): Json => {
  const { $defs, ...rest } = JSONSchema.make(schema) as unknown as Record<string, unknown>
  const ref = rest.$ref
  return typeof ref === "string" ? ($defs as Record<string, Json>)[ref.replace("#/$defs/", "")] ?? rest : rest
}

/** A value of the JSON Schema type: what stands for a reference while the consumer's schema is checked. */
const standIn = (schema: Json | undefined): unknown => {
  switch (schema?.type) {
    case "number":
    case "integer":
      return 0
    case "boolean":
      return true
    case "array":
      return []
    case "object":
      return {}
    default:
      return "x"
  }
}

/** The fields a tool's result has: `content`, `status`, and those of the result it declares. */
export const resultFields = (tool: Tool): Readonly<Record<string, Json | undefined>> => {
  const base: Record<string, Json | undefined> = Object.fromEntries(BASE_FIELDS.map((f) => [f, { type: "string" }]))
  if (tool.result === undefined) return base
  const properties = (jsonSchemaOf(tool.result).properties ?? {}) as Record<string, Json>
  return { ...base, ...properties }
}

const FIELD = /\{\{step(\d+)\.([A-Za-z_][\w]*)\}\}/
const WHOLE_FIELD = /^\{\{step(\d+)\.([A-Za-z_][\w]*)\}\}$/

/** The arguments with each reference replaced by a value of the type it will have, to check the consumer's schema. */
const withStandIns = (value: unknown, tools: ReadonlyArray<Tool | undefined>): unknown => {
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const record = value as Record<string, unknown>
    if (Object.keys(record).length === 1 && typeof record.from_step === "number") {
      const producer = tools[record.from_step - 1]
      return producer?.result === undefined ? "x" : standIn(jsonSchemaOf(producer.result))
    }
    return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, withStandIns(v, tools)]))
  }
  if (Array.isArray(value)) return value.map((item) => withStandIns(item, tools))
  if (typeof value === "string") {
    const whole = WHOLE_FIELD.exec(value)
    if (whole !== null) {
      const producer = tools[Number(whole[1]) - 1]
      return producer === undefined ? "x" : standIn(resultFields(producer)[whole[2]!])
    }
    return FIELD.test(value) ? value.replace(new RegExp(FIELD, "g"), "x") : value
  }
  return value
}

/**
 * The problems of a plan against the catalog, each naming its step: an unknown tool, a reference to the same or
 * a later step (or one that does not exist), a field the producer's result does not have, arguments outside the
 * tool's schema once references stand for values of their type, more steps than `maxSteps`. None: it may run
 * (each call still passes every gate when it does).
 */
export const validatePlan = (
  plan: Plan,
  find: (name: string) => Tool | undefined,
  maxSteps: number
): ReadonlyArray<string> => {
  const problems: Array<string> = []
  if (plan.steps.length === 0) problems.push("the plan has no steps")
  if (plan.steps.length > maxSteps) {
    problems.push(`step ${maxSteps + 1}: the plan has ${plan.steps.length} steps, more than maxSteps (${maxSteps})`)
  }
  const tools = plan.steps.map((step) => find(step.tool))
  plan.steps.forEach((step, i) => {
    const at = i + 1
    const tool = tools[i]
    if (tool === undefined) {
      problems.push(`step ${at}: unknown tool "${step.tool}"`)
      return
    }
    let referencesOk = true
    for (const reference of referencesOf(step.args)) {
      if (!Number.isInteger(reference.step) || reference.step < 1 || reference.step >= at) {
        problems.push(`step ${at}: refers to step ${reference.step}, which is not an earlier step`)
        referencesOk = false
        continue
      }
      const producer = tools[reference.step - 1]
      if (producer === undefined) continue
      if (reference._tag === "Field" && !(reference.field in resultFields(producer))) {
        problems.push(
          `step ${at}: step ${reference.step}'s result (${producer.name}) has no field "${reference.field}" ` +
            `(it has ${Object.keys(resultFields(producer)).join(", ")})`
        )
        referencesOk = false
      }
    }
    if (!referencesOk) return
    const args = withStandIns(step.args, tools)
    const prepared = tool.prepare(args)
    if (Either.isLeft(prepared)) {
      problems.push(
        `step ${at}: arguments outside ${tool.name}'s schema:\n${describeParseError(prepared.left, args).join("\n")}`
      )
    }
  })
  return problems
}
