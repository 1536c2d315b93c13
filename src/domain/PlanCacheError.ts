import { Schema } from "effect"

/** The plan cache could not be read or written: the turn goes on without it. */
export class PlanCacheError extends Schema.TaggedError<PlanCacheError>()("PlanCacheError", {
  path: Schema.String,
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}
