import { Either, Schema } from "effect"
import type { Tool } from "./Tool.js"
import type { ToolResult } from "./ToolCall.js"

/**
 * One step of a plan: a catalog tool and its arguments. An argument may be `{ "from_step": N }` (the whole
 * result of step N) or hold `"{{stepN.field}}"` (one field of it); steps count from 1.
 */
export const PlanStep = Schema.Struct({
  tool: Schema.String,
  args: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})
export type PlanStep = typeof PlanStep.Type

/** A finite list of typed steps: no free code, every reference to an earlier step. */
export const Plan = Schema.Struct({ steps: Schema.Array(PlanStep) })
export type Plan = typeof Plan.Type

/** A reference an argument makes: the whole result of a step, or one field of it. */
export type Reference =
  | { readonly _tag: "FromStep"; readonly step: number }
  | { readonly _tag: "Field"; readonly step: number; readonly field: string }

const FIELD = /\{\{step(\d+)\.([A-Za-z_][\w]*)\}\}/g
const WHOLE_FIELD = /^\{\{step(\d+)\.([A-Za-z_][\w]*)\}\}$/

const isFromStep = (value: unknown): value is { readonly from_step: number } =>
  typeof value === "object" && value !== null && !Array.isArray(value) &&
  Object.keys(value).length === 1 && typeof (value as Record<string, unknown>).from_step === "number"

/** Every reference in a step's arguments, at any depth. */
export const referencesOf = (value: unknown): ReadonlyArray<Reference> => {
  if (isFromStep(value)) return [{ _tag: "FromStep", step: value.from_step }]
  if (typeof value === "string") {
    return [...value.matchAll(FIELD)].map((match) => ({ _tag: "Field", step: Number(match[1]), field: match[2]! }))
  }
  if (Array.isArray(value)) return value.flatMap(referencesOf)
  if (typeof value === "object" && value !== null) return Object.values(value).flatMap(referencesOf)
  return []
}

/** The fields every result has, whatever its tool declares. */
export const BASE_FIELDS: ReadonlyArray<string> = ["content", "status"]

/** What a step produced, as later steps may read it. */
export interface StepOutput {
  readonly tool: Tool
  readonly result: ToolResult
}

/**
 * A step's value for its consumers: `whole` (what `from_step` passes: the declared result decoded from the
 * content, else the content) and `fields` (what `{{stepN.field}}` reads: `content`, `status` and the declared ones).
 */
export const outputValue = (
  output: StepOutput
): Either.Either<{ readonly whole: unknown; readonly fields: Readonly<Record<string, unknown>> }, string> => {
  const base = { content: output.result.content, status: output.result.status }
  if (output.tool.result === undefined) return Either.right({ whole: output.result.content, fields: base })
  try {
    const decoded = Schema.decodeUnknownEither(output.tool.result)(JSON.parse(output.result.content))
    if (Either.isLeft(decoded)) return Either.left(`its content does not match the result ${output.tool.name} declares`)
    const value: unknown = decoded.right
    const fields = typeof value === "object" && value !== null && !Array.isArray(value) ? value : {}
    return Either.right({ whole: value, fields: { ...base, ...fields } })
  } catch {
    return Either.left(`its content is not the JSON ${output.tool.name} declares`)
  }
}

const produced = (outputs: ReadonlyArray<StepOutput | undefined>, at: number, step: number) => {
  const output = outputs[step - 1]
  if (output === undefined) return Either.left(`step ${at}: step ${step} has not run`)
  const { result, tool } = output
  if (result.status === "failed" || result.status === "empty" || result.content.trim() === "") {
    return Either.left(
      `step ${at}: step ${step} (${tool.name}) returned nothing (${result.status}), so there is nothing to pass on; ` +
        "an older result is never used instead"
    )
  }
  return Either.mapLeft(outputValue(output), (problem) => `step ${at}: step ${step} (${tool.name}): ${problem}`)
}

const fieldOf = (
  value: { readonly fields: Readonly<Record<string, unknown>> },
  field: string,
  at: number,
  step: number
): Either.Either<unknown, string> => {
  const record = value.fields
  return record[field] === undefined || record[field] === null
    ? Either.left(`step ${at}: step ${step} returned no "${field}"`)
    : Either.right(record[field])
}

/**
 * The arguments of step `at` with its references replaced by what the earlier steps produced; a reference to a
 * step that produced nothing is an error naming both steps.
 */
export const resolveArgs = (
  args: unknown,
  at: number,
  outputs: ReadonlyArray<StepOutput | undefined>
): Either.Either<unknown, string> => {
  if (isFromStep(args)) {
    return Either.map(produced(outputs, at, args.from_step), (value) => value.whole)
  }
  if (typeof args === "string") {
    const whole = WHOLE_FIELD.exec(args)
    if (whole !== null) {
      const step = Number(whole[1])
      return Either.flatMap(produced(outputs, at, step), (value) => fieldOf(value, whole[2]!, at, step))
    }
    let failure: string | undefined
    const text = args.replace(FIELD, (_, n: string, field: string) => {
      const value = Either.flatMap(produced(outputs, at, Number(n)), (v) => fieldOf(v, field, at, Number(n)))
      if (Either.isLeft(value)) {
        failure ??= value.left
        return ""
      }
      return typeof value.right === "string" ? value.right : JSON.stringify(value.right)
    })
    return failure === undefined ? Either.right(text) : Either.left(failure)
  }
  if (Array.isArray(args)) return Either.all(args.map((item) => resolveArgs(item, at, outputs)))
  if (typeof args === "object" && args !== null) {
    return Either.map(
      Either.all(
        Object.entries(args).map(([key, value]) =>
          Either.map(resolveArgs(value, at, outputs), (v) => [key, v] as const)
        )
      ),
      (entries) => Object.fromEntries(entries)
    )
  }
  return Either.right(args)
}
