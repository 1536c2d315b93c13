import { Schema } from "effect"
import { PolicyVerdict } from "./ToolCall.js"

const PositiveInt = Schema.Int.pipe(Schema.positive())
const NonNegative = Schema.Number.pipe(Schema.nonNegative())
const withDefault = <S extends Schema.Schema.AnyNoContext>(schema: S, value: () => Schema.Schema.Type<S>) =>
  Schema.optionalWith(schema, { default: value })

/** A canned list of responses, served in order: part of the product (tests, demos), not a test hack. */
export const ScriptedProviderConfig = Schema.Struct({
  provider: Schema.Literal("scripted"),
  script: Schema.String.pipe(Schema.minLength(1)),
  model: withDefault(Schema.String, () => "scripted")
})
export type ScriptedProviderConfig = typeof ScriptedProviderConfig.Type

export const ProviderConfig = Schema.Union(ScriptedProviderConfig)
export type ProviderConfig = typeof ProviderConfig.Type

export const PolicyRule = Schema.Struct({
  match: Schema.String.pipe(Schema.minLength(1)),
  decision: PolicyVerdict,
  forceTier: Schema.optional(Schema.Literal("frontier")),
  reason: Schema.optional(Schema.String)
})
export type PolicyRule = typeof PolicyRule.Type

export const ModelPrice = Schema.Struct({
  inputPerMTok: NonNegative,
  cachedInputPerMTok: NonNegative,
  outputPerMTok: NonNegative
})
export type ModelPrice = typeof ModelPrice.Type

const Tiers = Schema.Struct({
  frontier: withDefault(Schema.Array(ProviderConfig), () => []),
  "local-fast": withDefault(Schema.Array(ProviderConfig), () => [])
})

const Timeouts = Schema.Struct({
  llmMs: withDefault(PositiveInt, () => 60_000),
  toolMs: withDefault(PositiveInt, () => 30_000)
})

const Retries = Schema.Struct({
  max: withDefault(Schema.Int.pipe(Schema.between(0, 3)), () => 3),
  baseDelayMs: withDefault(PositiveInt, () => 500)
})

const Budget = Schema.Struct({
  softCapEur: withDefault(NonNegative, () => 2),
  hardCapEur: withDefault(NonNegative, () => 5)
})

/** myclaw.json (DESIGN section 12); every field has a default, so `{}` is a valid configuration. */
export class AppConfig extends Schema.Class<AppConfig>("AppConfig")({
  tiers: withDefault(Tiers, () => ({ frontier: [], "local-fast": [] })),
  maxSteps: withDefault(PositiveInt, () => 10),
  timeouts: withDefault(Timeouts, () => ({ llmMs: 60_000, toolMs: 30_000 })),
  retries: withDefault(Retries, () => ({ max: 3, baseDelayMs: 500 })),
  policy: withDefault(Schema.Struct({ rules: withDefault(Schema.Array(PolicyRule), () => []) }), () => ({
    rules: []
  })),
  approvals: withDefault(Schema.Struct({ timeoutMs: withDefault(PositiveInt, () => 300_000) }), () => ({
    timeoutMs: 300_000
  })),
  budget: withDefault(Budget, () => ({ softCapEur: 2, hardCapEur: 5 })),
  pricing: withDefault(Schema.Record({ key: Schema.String, value: ModelPrice }), () => ({})),
  usdToEur: withDefault(Schema.Number.pipe(Schema.positive()), () => 0.92),
  traces: withDefault(
    Schema.Struct({ fsync: withDefault(Schema.Literal("always", "batch"), () => "batch" as const) }),
    () => ({ fsync: "batch" as const })
  )
}) {}

export const decodeAppConfig = Schema.decodeUnknown(AppConfig, { errors: "all", onExcessProperty: "error" })
