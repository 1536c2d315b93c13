import { Either } from "effect"
import type { PlanAnswer } from "./CachedPlan.js"
import type { ActionStep } from "./ExecutionTrace.js"
import { outputValue, type Plan, type StepOutput } from "./Plan.js"
import type { Tool } from "./Tool.js"

/** A value shorter than this is too common to say it came from an earlier result. */
const MIN_REFERENCE_LENGTH = 3

/** An argument value as a reference to the latest earlier result that produced it exactly, or the value itself. */
const asReference = (value: unknown, outputs: ReadonlyArray<StepOutput>): unknown => {
  if (Array.isArray(value)) return value.map((item) => asReference(item, outputs))
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asReference(v, outputs)]))
  }
  if (typeof value !== "string" && typeof value !== "number") return value
  if (typeof value === "string" && value.trim().length < MIN_REFERENCE_LENGTH) return value
  for (let j = outputs.length - 1; j >= 0; j--) {
    const produced = outputValue(outputs[j]!)
    if (Either.isLeft(produced)) continue
    if (typeof value === "string" && value === outputs[j]!.result.content) return { from_step: j + 1 }
    for (const [field, fieldValue] of Object.entries(produced.right.fields)) {
      if (field !== "status" && field !== "content" && fieldValue === value) return `{{step${j + 1}.${field}}}`
    }
  }
  return value
}

/** The answer with each result that appears in it verbatim replaced by its reference. */
const templateOf = (response: string, outputs: ReadonlyArray<StepOutput>): { text: string; covered: boolean } => {
  let text = response
  let covered = true
  outputs.forEach((output, i) => {
    const content = output.result.content.trim()
    if (content.length >= MIN_REFERENCE_LENGTH && text.includes(content)) {
      text = text.split(content).join(`{{step${i + 1}.content}}`)
    } else if (!output.tool.hasSideEffects) {
      covered = false
    }
  })
  return { text, covered }
}

/**
 * The plan a successful turn's tool calls make, when they make one: every call valid, run and successful (what
 * was refused or failed is not worth repeating), arguments that repeat an earlier result exactly turned into
 * references to it. The answer is a template when it is made of the results (or the plan only acts); otherwise
 * a local-fast model writes it again from the results.
 */
export const extractPlan = (
  steps: ReadonlyArray<ActionStep>,
  response: string,
  find: (name: string) => Tool | undefined
): { readonly plan: Plan; readonly answer: PlanAnswer } | undefined => {
  if (steps.length === 0) return undefined
  const outputs: Array<StepOutput> = []
  const planSteps: Array<Plan["steps"][number]> = []
  for (const step of steps) {
    const tool = find(step.tool_name)
    const result = step.exec_result
    if (tool === undefined || step.validation !== "ok" || result === null || result.status !== "success") {
      return undefined
    }
    if (typeof step.args !== "object" || step.args === null || Array.isArray(step.args)) return undefined
    planSteps.push({ tool: tool.name, args: asReference(step.args, outputs) as Record<string, unknown> })
    outputs.push({ tool, result })
  }
  const template = templateOf(response, outputs)
  return {
    plan: { steps: planSteps },
    answer: template.covered ? { kind: "template", text: template.text } : { kind: "tier", tier: "local-fast" }
  }
}
