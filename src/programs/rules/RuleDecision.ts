import { Data } from "effect"
import type { ActionStep, Outcome } from "../../domain/ExecutionTrace.js"
import type { ToolCall } from "../../domain/ToolCall.js"

/**
 * What a rule decided: an answer, or calls that run through the turn's own gates (validation, policy, approval,
 * audit) before the answer is written from what ran. No model is involved either way.
 */
export type RuleDecision = Data.TaggedEnum<{
  Answer: {
    readonly rule: string
    readonly outcome: Outcome
    readonly response: string
    readonly metadata?: Readonly<Record<string, unknown>>
  }
  Act: {
    readonly rule: string
    readonly calls: ReadonlyArray<ToolCall>
    readonly metadata?: Readonly<Record<string, unknown>>
    /** The answer, from the steps the calls left (when none of them ended the turn). */
    readonly answer: (steps: ReadonlyArray<ActionStep>) => string
  }
}>
export const RuleDecision = Data.taggedEnum<RuleDecision>()
