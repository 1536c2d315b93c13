import { Schema } from "effect"
import { LlmFailure } from "./Errors.js"
import { FinishReason } from "./ExecutionTrace.js"

const Count = Schema.Int.pipe(Schema.nonNegative())

/** One canned response; `args` may be a JSON string, as on the wire (invalid JSON stays invalid). */
export const ScriptEntry = Schema.Struct({
  text: Schema.optional(Schema.String),
  toolCalls: Schema.optional(Schema.Array(Schema.Struct({
    id: Schema.optional(Schema.String),
    name: Schema.String,
    args: Schema.Union(Schema.String, Schema.Record({ key: Schema.String, value: Schema.Unknown }))
  }))),
  usage: Schema.optional(Schema.Struct({ input: Count, output: Count, cached: Schema.optional(Count) })),
  finishReason: Schema.optional(FinishReason),
  /** Fail this call instead of answering, e.g. `{ "reason": "Server" }` to exercise retries. */
  error: Schema.optional(Schema.Struct({ reason: LlmFailure, message: Schema.optional(Schema.String) })),
  /** Answer only after this long (Effect clock: tests move it with TestClock). */
  delayMs: Schema.optional(Count)
})
export type ScriptEntry = typeof ScriptEntry.Type
export const Script = Schema.Array(ScriptEntry)
