import { Clock, Effect } from "effect"
import { version } from "../Version.js"
import { Llm } from "../services/Llm.js"
import { MyclawConfig } from "../services/MyclawConfig.js"
import { Workspace } from "../services/Workspace.js"

export interface HealthReport {
  readonly status: "ok" | "degraded" | "down"
  readonly version: string
  readonly uptime_s: number
  readonly pid: number
  readonly workspace: { readonly root: string; readonly config_file: string; readonly config_loaded: boolean }
  readonly llm: {
    readonly configured: boolean
    readonly last_successful_call_at: string | null
    readonly providers: ReadonlyArray<{
      readonly tier: string
      readonly provider: string
      readonly model: string
      readonly last_success_at: string | null
      readonly last_error: { readonly reason: string; readonly message: string; readonly at: string } | null
      readonly cooling_down_until: string | null
    }>
  }
  readonly problems: ReadonlyArray<string>
}

/** GET /health: what the process knows about itself; later issues add budget, channels and LLM reachability. */
export const makeHealth = Effect.gen(function*() {
  const llm = yield* Llm
  const workspace = yield* Workspace
  const { file, loaded } = yield* MyclawConfig
  const startedAt = yield* Clock.currentTimeMillis
  const iso = (millis: number | null) => (millis === null ? null : new Date(millis).toISOString())
  return Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const providers = yield* llm.health
    const problems = providers.length === 0
      ? [`no LLM provider is configured: add one under "tiers" in ${file}`]
      : []
    const lastSuccess = providers.reduce<number | null>(
      (latest, p) => (p.lastSuccessAt !== null && (latest === null || p.lastSuccessAt > latest) ? p.lastSuccessAt : latest),
      null
    )
    const report: HealthReport = {
      status: problems.length === 0 ? "ok" : "degraded",
      version,
      uptime_s: Math.floor((now - startedAt) / 1000),
      pid: process.pid,
      workspace: { root: workspace.root, config_file: file, config_loaded: loaded },
      llm: {
        configured: providers.length > 0,
        last_successful_call_at: iso(lastSuccess),
        providers: providers.map((p) => ({
          tier: p.tier,
          provider: p.provider,
          model: p.model,
          last_success_at: iso(p.lastSuccessAt),
          last_error: p.lastError === null ? null : { ...p.lastError, at: iso(p.lastError.at)! },
          cooling_down_until: p.cooldownUntil === null || p.cooldownUntil <= now ? null : iso(p.cooldownUntil)
        }))
      },
      problems
    }
    return report
  })
})
