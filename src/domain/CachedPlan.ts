import { JSONSchema, Schema } from "effect"
import { canonicalJson } from "./ArgsHash.js"
import { Tier } from "./ExecutionTrace.js"
import { Plan } from "./Plan.js"
import { sha256HexPrefix } from "./Sha256.js"
import type { Tool } from "./Tool.js"
import { parametersJsonSchema } from "./ToolValidation.js"

/** How a reused plan's answer is written: a template filled from the results, or by a model of this tier. */
export const PlanAnswer = Schema.Union(
  Schema.Struct({ kind: Schema.Literal("template"), text: Schema.String }),
  Schema.Struct({ kind: Schema.Literal("tier"), tier: Tier })
)
export type PlanAnswer = typeof PlanAnswer.Type

/** A plan a successful turn left, kept for the same request in the same workspace. */
export const CachedPlan = Schema.Struct({
  id: Schema.String,
  /** The normalised request it answers. */
  request: Schema.String,
  plan: Plan,
  /** The signature of each tool the plan uses, as it was when the plan was cached. */
  signature: Schema.Record({ key: Schema.String, value: Schema.String }),
  answer: PlanAnswer,
  /** How many times the plan served a request (its first turn included) and how many times a reuse failed. */
  successes: Schema.Number,
  failures: Schema.Number,
  source_trace: Schema.String,
  created_at: Schema.Number,
  last_used_at: Schema.NullOr(Schema.Number)
})
export type CachedPlan = typeof CachedPlan.Type

export type NewPlan = Pick<CachedPlan, "request" | "plan" | "signature" | "answer" | "source_trace">

/** Case, spacing and final punctuation do not make another request. */
export const normaliseRequest = (text: string): string =>
  text.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim().replace(/[\s.!?;,]+$/, "")

/** A hash of what a tool is to a plan: its name, parameter and result schemas, and version. */
export const toolSignature = (tool: Tool): string =>
  sha256HexPrefix(
    canonicalJson({
      name: tool.name,
      parameters: parametersJsonSchema(tool.parameters),
      result: tool.result === undefined ? null : JSONSchema.make(tool.result),
      version: tool.version
    }),
    32
  )

/** The signatures of the tools a plan uses; a tool the catalog lacks is left out (the plan is not kept). */
export const planSignature = (plan: Plan, find: (name: string) => Tool | undefined): Record<string, string> =>
  Object.fromEntries(
    plan.steps.flatMap((step) => {
      const tool = find(step.tool)
      return tool === undefined ? [] : [[tool.name, toolSignature(tool)] as const]
    })
  )

/** Why a cached plan's signatures no longer hold, or undefined when every tool is as it was. */
export const signatureChange = (
  cached: CachedPlan,
  find: (name: string) => Tool | undefined
): string | undefined => {
  for (const [name, signature] of Object.entries(cached.signature)) {
    const tool = find(name)
    if (tool === undefined) return `the tool ${name} is no longer in the catalog`
    if (toolSignature(tool) !== signature) {
      return `the tool ${name} changed (schema or version) since the plan was cached`
    }
  }
  return undefined
}
