import { FileSystem } from "@effect/platform"
import { Clock, Config, Effect, Option } from "effect"
import * as NodePath from "node:path"
import { sha256Hex } from "../domain/Sha256.js"
import { isoAt } from "../domain/Time.js"
import { AuditLog } from "../services/AuditLog.js"
import { Budget } from "../services/Budget.js"
import { ChannelStates } from "../services/ChannelStates.js"
import { Llm, type ProviderHealth } from "../services/Llm.js"
import { McpServers } from "../services/McpServers.js"
import { Metrics } from "../services/Metrics.js"
import { MyclawConfig } from "../services/MyclawConfig.js"
import { Workspace } from "../services/Workspace.js"
import { version } from "../Version.js"

export type HealthStatus = "ok" | "degraded" | "down"

export interface HealthReport {
  readonly status: HealthStatus
  readonly version: string
  readonly uptime_s: number
  /** Names only, no absolute path: the report is open to anyone who can reach the port. */
  readonly workspace: {
    readonly name: string
    readonly config_file: string
    readonly config_loaded: boolean
    readonly mounted: boolean
    readonly writable: boolean
    readonly soul_present: boolean
    /** SOUL.md has not changed since the process started. */
    readonly soul_hash_matches: boolean
  }
  readonly llm: {
    readonly configured: boolean
    readonly reachable: boolean
    readonly default_provider: string | null
    readonly last_successful_call_at: string | null
    readonly providers: ReadonlyArray<{
      readonly tier: string
      readonly provider: string
      readonly model: string
      readonly last_success_at: string | null
      readonly last_error: { readonly reason: string; readonly at: string } | null
      readonly cooling_down_until: string | null
    }>
  }
  readonly channels: Readonly<Record<string, string>>
  readonly memory: { readonly rss_mb: number; readonly heap_used_mb: number }
  readonly budget: {
    readonly soft_cap_eur: number
    readonly hard_cap_eur: number
    readonly spent_today_eur: number
    readonly override_active: boolean
    readonly level: "ok" | "soft" | "hard"
  }
  /** Whether audit records can be written; turns are refused while they cannot. */
  readonly audit: { readonly writable: boolean; readonly problem: string | null }
  /** The configured MCP servers: `up`, or `starting`/`down` (their tools answer `failed` meanwhile). */
  readonly mcp: {
    readonly servers: ReadonlyArray<{
      readonly name: string
      readonly transport: "stdio" | "http"
      readonly state: "starting" | "up" | "down"
      readonly tools: number
      readonly restarts: number
      readonly retry_at: string | null
    }>
  }
  readonly recent_errors_1h: number
  /** Why the status is not ok, one sentence each. */
  readonly problems: ReadonlyArray<string>
}

/** The LLM counts as down when every provider has been failing, with no success, for longer than this. */
export const LLM_DOWN_AFTER_MS = 5 * 60_000

const iso = (millis: number | null) => (millis === null ? null : isoAt(millis))
const mb = (bytes: number) => Math.round(bytes / 1048576 * 10) / 10
const failing = (p: ProviderHealth) =>
  p.lastError !== null && (p.lastSuccessAt === null || p.lastError.at > p.lastSuccessAt)

/**
 * GET /health, computed from the services on every call and cheap
 * enough to poll every second. down: workspace missing or not writable, SOUL.md missing, every LLM provider
 * failing for more than 5 minutes. degraded: soft or hard cap reached, SOUL.md changed since start, an LLM
 * tier failing (retrying), no LLM configured, an MCP server down (restarting), the Telegram channel failing.
 * Provider error messages are left out: they may quote a key.
 */
export const makeHealth = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const llm = yield* Llm
  const budget = yield* Budget
  const audit = yield* AuditLog
  const metrics = yield* Metrics
  const workspace = yield* Workspace
  const { file, loaded } = yield* MyclawConfig
  const mcp = yield* Effect.serviceOption(McpServers)
  const telegram = yield* Config.option(Config.redacted("TELEGRAM_BOT_TOKEN"))
  const channelStates = yield* Effect.serviceOption(ChannelStates)
  const startedAt = yield* Clock.currentTimeMillis
  const soulFile = NodePath.join(workspace.root, "SOUL.md")
  const workspaceName = NodePath.basename(workspace.root)
  const relative = NodePath.relative(workspace.root, file)
  const configName = relative.startsWith("..") || NodePath.isAbsolute(relative) ? NodePath.basename(file) : relative
  const soulHash = fs.readFile(soulFile).pipe(
    Effect.map((bytes) => Option.some(sha256Hex(bytes))),
    Effect.orElseSucceed(() => Option.none<string>())
  )
  const soulAtStart = yield* soulHash
  // Checked once at start, so that a log that cannot be written is reported before the first turn.
  yield* audit.ready.pipe(Effect.ignore)

  return Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const mounted = yield* fs.stat(workspace.root).pipe(
      Effect.map((info) => info.type === "Directory"),
      Effect.orElseSucceed(() => false)
    )
    const writable = mounted && (yield* fs.access(workspace.root, { writable: true }).pipe(Effect.isSuccess))
    const soul = yield* soulHash
    const soulMatches = Option.isSome(soul) && Option.isSome(soulAtStart) && soul.value === soulAtStart.value
    const providers = yield* llm.health
    const money = yield* budget.status
    // Only a failing log is probed again (to notice it works again); a working one costs nothing here.
    let auditFailure = yield* audit.lastFailure
    if (Option.isSome(auditFailure)) {
      yield* audit.ready.pipe(Effect.ignore)
      auditFailure = yield* audit.lastFailure
    }

    const mcpServers = Option.isSome(mcp) ? yield* mcp.value.status : []
    // Telegram as the channel last reported it: with a token, `starting` until it has (`configured` where
    // nothing keeps channel states).
    const telegramState = Option.isNone(channelStates) ? undefined : yield* channelStates.value.get("telegram")

    const down: Array<string> = []
    const degraded: Array<string> = []
    if (!mounted) down.push(`the workspace folder ${workspaceName} is missing`)
    else if (!writable) down.push(`the workspace folder ${workspaceName} is not writable`)
    if (Option.isSome(auditFailure)) {
      down.push(`the audit log cannot be written (${auditFailure.value.message}): turns are refused until it can`)
    }
    if (Option.isNone(soul)) down.push("SOUL.md (the constitution) is missing")
    else if (!soulMatches) degraded.push("SOUL.md changed since myclaw started")

    const successes = providers.flatMap((p) => (p.lastSuccessAt === null ? [] : [p.lastSuccessAt]))
    const lastSuccess = successes.length === 0 ? null : Math.max(...successes)
    const reachable = providers.length > 0 && !providers.every(failing)
    if (providers.length === 0) degraded.push(`no LLM provider is configured: add one under "tiers" in ${configName}`)
    else if (!reachable && now - (lastSuccess ?? startedAt) > LLM_DOWN_AFTER_MS) {
      down.push(`every LLM provider has been failing for more than ${LLM_DOWN_AFTER_MS / 60_000} minutes`)
    } else {
      for (const tier of ["frontier", "local-fast"] as const) {
        const own = providers.filter((p) => p.tier === tier)
        if (own.length > 0 && own.every(failing)) degraded.push(`the ${tier} LLM tier is failing (retrying)`)
      }
    }
    if (money.level === "hard") {
      degraded.push(`the daily hard cap (${money.hardCapEur} EUR) is reached: read-only until midnight`)
    } else if (money.level === "soft") {
      degraded.push(`the daily soft cap (${money.softCapEur} EUR) is reached: Thoughts use local-fast`)
    }

    for (const server of mcpServers) {
      if (server.state === "down") degraded.push(`the MCP server ${server.name} is down (restarting)`)
    }
    if (telegramState?._tag === "Failing") {
      degraded.push(`the Telegram channel is failing since ${isoAt(telegramState.since)}: ${telegramState.why}`)
    }

    const memory = process.memoryUsage()
    const report: HealthReport = {
      status: down.length > 0 ? "down" : degraded.length > 0 ? "degraded" : "ok",
      version,
      uptime_s: Math.floor((now - startedAt) / 1000),
      workspace: {
        name: workspaceName,
        config_file: configName,
        config_loaded: loaded,
        mounted,
        writable,
        soul_present: Option.isSome(soul),
        soul_hash_matches: soulMatches
      },
      llm: {
        configured: providers.length > 0,
        reachable,
        default_provider: (providers.find((p) => p.tier === "frontier") ?? providers[0])?.provider ?? null,
        last_successful_call_at: iso(lastSuccess),
        providers: providers.map((p) => ({
          tier: p.tier,
          provider: p.provider,
          model: p.model,
          last_success_at: iso(p.lastSuccessAt),
          last_error: p.lastError === null ? null : { reason: p.lastError.reason, at: iso(p.lastError.at)! },
          cooling_down_until: p.cooldownUntil === null || p.cooldownUntil <= now ? null : iso(p.cooldownUntil)
        }))
      },
      channels: {
        http: "listening",
        telegram: telegramState !== undefined
          ? telegramState._tag === "Failing" ? "failing" : telegramState.how
          : Option.isNone(telegram)
          ? "off"
          : Option.isNone(channelStates)
          ? "configured"
          : "starting"
      },
      memory: { rss_mb: mb(memory.rss), heap_used_mb: mb(memory.heapUsed) },
      budget: {
        soft_cap_eur: money.softCapEur,
        hard_cap_eur: money.hardCapEur,
        spent_today_eur: Math.round(money.spentEur * 10_000) / 10_000,
        override_active: money.overrideUntil !== null && money.overrideUntil > now,
        level: money.level
      },
      audit: {
        writable: Option.isNone(auditFailure),
        problem: Option.isSome(auditFailure) ? auditFailure.value.message : null
      },
      mcp: {
        servers: mcpServers.map((server) => ({
          name: server.name,
          transport: server.transport,
          state: server.state,
          tools: server.tools,
          restarts: server.restarts,
          retry_at: iso(server.retryAt)
        }))
      },
      recent_errors_1h: yield* metrics.recentErrors,
      problems: [...down, ...degraded]
    }
    return report
  })
})
