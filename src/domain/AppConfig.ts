import { Schema } from "effect"
import { isAddressOrRange } from "./AddressClass.js"
import { defaultMcpConfig, McpConfig } from "./McpConfig.js"
import { onFirstCall } from "./OnFirstCall.js"
import { defaultTelegramConfig, TelegramConfig } from "./TelegramConfig.js"
import { machineTimeZone } from "./Time.js"
import { PolicyVerdict } from "./ToolCall.js"

const PositiveInt = Schema.Int.pipe(Schema.positive())
const NonNegative = Schema.Number.pipe(Schema.nonNegative())
const withDefault = <S extends Schema.Schema.AnyNoContext>(schema: S, value: () => Schema.Schema.Type<S>) =>
  Schema.optionalWith(schema, { default: value })

/** A canned list of responses, served in order: part of the product (tests, demos), not a test hack. */
export const ScriptedProviderConfig = Schema.Struct({
  provider: Schema.Literal("scripted"),
  script: Schema.String.pipe(Schema.minLength(1)),
  model: withDefault(Schema.String, () => "scripted"),
  /** Once the script runs out, start again from its first response (a demo that keeps answering). */
  loop: withDefault(Schema.Boolean, () => false)
})
export type ScriptedProviderConfig = typeof ScriptedProviderConfig.Type

const HttpUrl = Schema.String.pipe(
  Schema.filter((url) => /^https?:\/\/[^\s/]+/.test(url) || "expected an http:// or https:// URL"),
  Schema.transform(Schema.String, { decode: (url) => url.replace(/\/+$/, ""), encode: (url) => url })
)
const EnvName = Schema.String.pipe(Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]*$/, {
  message: () => "expected the name of an environment variable (the key itself never goes in this file)"
}))

/** Chat Completions (OpenAI, or any compatible server: llama.cpp, Ollama, vLLM, OpenRouter) via `baseUrl`. */
export const OpenAiProviderConfig = Schema.Struct({
  provider: Schema.Literal("openai"),
  model: Schema.String.pipe(Schema.minLength(1)),
  baseUrl: withDefault(HttpUrl, () => "https://api.openai.com/v1"),
  /** Where the API key is; unset means no Authorization header (a local server). */
  apiKeyEnv: withDefault(EnvName, () => "OPENAI_API_KEY"),
  maxTokens: withDefault(PositiveInt, () => 4096),
  /** `max_completion_tokens` for OpenAI's reasoning models, `max_tokens` for most compatible servers. */
  maxTokensField: withDefault(Schema.Literal("max_tokens", "max_completion_tokens"), () => "max_tokens" as const)
})
export type OpenAiProviderConfig = typeof OpenAiProviderConfig.Type

/** The Anthropic Messages API, with prompt caching on the stable prefix. */
export const AnthropicProviderConfig = Schema.Struct({
  provider: Schema.Literal("anthropic"),
  model: Schema.String.pipe(Schema.minLength(1)),
  baseUrl: withDefault(HttpUrl, () => "https://api.anthropic.com"),
  apiKeyEnv: withDefault(EnvName, () => "ANTHROPIC_API_KEY"),
  maxTokens: withDefault(PositiveInt, () => 4096)
})
export type AnthropicProviderConfig = typeof AnthropicProviderConfig.Type

export const ProviderConfig = Schema.Union(ScriptedProviderConfig, OpenAiProviderConfig, AnthropicProviderConfig)
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
  outputPerMTok: NonNegative,
  /** Tokens written to the prompt cache (Anthropic: 1.25x input); the input price when absent. */
  cacheWritePerMTok: Schema.optional(NonNegative)
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

const TimeZone = Schema.String.pipe(Schema.filter((zone) => {
  if (zone === "UTC") return true
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone })
    return true
  } catch {
    return `unknown time zone "${zone}" (use an IANA name such as Europe/Rome)`
  }
}))
const ClockTime = Schema.String.pipe(
  Schema.pattern(/^([01]\d|2[0-3]):[0-5]\d$/, { message: () => "expected HH:MM, e.g. 22:00" })
)

const Budget = Schema.Struct({
  softCapEur: withDefault(NonNegative, () => 2),
  hardCapEur: withDefault(NonNegative, () => 5),
  /** Counters reset at midnight in this zone (default: the machine's). */
  timeZone: withDefault(TimeZone, machineTimeZone)
})

const Audit = Schema.Struct({
  /** `always`: every record synced before append returns; `batch`: synced in groups. */
  fsync: withDefault(Schema.Literal("always", "batch"), () => "always" as const)
})

const Backup = Schema.Struct({
  /** Where `myclaw backup` and the daily backup write (default: `<workspace>/../myclaw-backups`). */
  dest: Schema.optional(Schema.String),
  /** `myclaw serve` makes one a day at this local time; null turns it off. */
  dailyAt: withDefault(Schema.NullOr(ClockTime), () => "03:30")
})

const Digest = Schema.Struct({
  /** `myclaw serve` sends the day's digest at this local time; null turns it off. */
  dailyAt: withDefault(Schema.NullOr(ClockTime), () => "22:00")
})

const Web = Schema.Struct({
  /** Addresses or CIDR ranges web_fetch may reach although they are not public (e.g. "127.0.0.1", "10.0.0.0/8"). */
  allowPrivate: withDefault(
    Schema.Array(
      Schema.String.pipe(
        Schema.filter((entry) => isAddressOrRange(entry) || `"${entry}" is not an IP address or a CIDR range`)
      )
    ),
    () => []
  ),
  timeoutMs: withDefault(PositiveInt, () => 15_000),
  maxBytes: withDefault(PositiveInt, () => 1024 * 1024)
})

const Shell = Schema.Struct({
  /** The default and longest timeout of a command; `timeouts.toolMs` bounds every tool call as well. */
  timeoutS: withDefault(PositiveInt, () => 20),
  /** Output kept for the model and the trace (head and tail); the middle of longer output is cut. */
  maxOutputBytes: withDefault(PositiveInt, () => 64 * 1024)
})

/** Optional built-in tools: off unless the owner turns them on. */
const ToolsEnabled = Schema.Struct({
  web: withDefault(Schema.Boolean, () => false),
  shell: withDefault(Schema.Boolean, () => false)
})

const Plans = Schema.Struct({
  /** Reuse a cached plan for the same request (fast path); every step still passes every check. */
  enabled: withDefault(Schema.Boolean, () => true),
  /** Reuse a plan confirmed at least twice for a similar request whose variable parts are its arguments. */
  autopath: withDefault(Schema.Boolean, () => false),
  /** How similar (shared words over all words) a request must be to a plan's for autopath. */
  similarity: withDefault(Schema.Number.pipe(Schema.between(0, 1)), () => 0.6)
})

/** myclaw.json; every field has a default, so `{}` is a valid configuration. */
export class AppConfig extends Schema.Class<AppConfig>("AppConfig")({
  tiers: withDefault(Tiers, () => ({ frontier: [], "local-fast": [] })),
  maxSteps: withDefault(PositiveInt, () => 10),
  timeouts: withDefault(Timeouts, () => ({ llmMs: 60_000, toolMs: 30_000 })),
  retries: withDefault(Retries, () => ({ max: 3, baseDelayMs: 500 })),
  policy: withDefault(
    Schema.Struct({
      rules: withDefault(Schema.Array(PolicyRule), () => []),
      /** Workspace globs whose content does not taint a turn (judged on the resolved real path). */
      trusted: withDefault(Schema.Array(Schema.String.pipe(Schema.minLength(1))), () => [])
    }),
    () => ({ rules: [], trusted: [] })
  ),
  approvals: withDefault(Schema.Struct({ timeoutMs: withDefault(PositiveInt, () => 300_000) }), () => ({
    timeoutMs: 300_000
  })),
  budget: withDefault(Budget, () => ({ softCapEur: 2, hardCapEur: 5, timeZone: machineTimeZone() })),
  audit: withDefault(Audit, () => ({ fsync: "always" as const })),
  backup: withDefault(Backup, () => ({ dailyAt: "03:30" })),
  digest: withDefault(Digest, () => ({ dailyAt: "22:00" })),
  pricing: withDefault(Schema.Record({ key: Schema.String, value: ModelPrice }), () => ({})),
  usdToEur: withDefault(Schema.Number.pipe(Schema.positive()), () => 0.92),
  traces: withDefault(
    Schema.Struct({
      fsync: withDefault(Schema.Literal("always", "batch"), () => "batch" as const),
      /** Keep each Thought's whole request in the trace (not only its hash): a replay then shows both sides. */
      recordRequests: withDefault(Schema.Boolean, () => false)
    }),
    () => ({ fsync: "batch" as const, recordRequests: false })
  ),
  telegram: withDefault(TelegramConfig, defaultTelegramConfig),
  tools: withDefault(ToolsEnabled, () => ({ web: false, shell: false })),
  web: withDefault(Web, () => ({ allowPrivate: [], timeoutMs: 15_000, maxBytes: 1024 * 1024 })),
  shell: withDefault(Shell, () => ({ timeoutS: 20, maxOutputBytes: 64 * 1024 })),
  /** Model Context Protocol servers whose tools join the catalog as `<server>__<tool>`. */
  mcp: withDefault(McpConfig, defaultMcpConfig),
  plans: withDefault(Plans, () => ({ enabled: true, autopath: false, similarity: 0.6 }))
}) {}

export const decodeAppConfig = onFirstCall(() =>
  Schema.decodeUnknown(AppConfig, { errors: "all", onExcessProperty: "error" })
)
