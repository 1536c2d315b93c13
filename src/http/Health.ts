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
    readonly providers: ReadonlyArray<{ readonly tier: string; readonly provider: string; readonly model: string }>
  }
  readonly problems: ReadonlyArray<string>
}

/** GET /health: what the process knows about itself; later issues add budget, channels and LLM reachability. */
export const makeHealth = Effect.gen(function*() {
  const llm = yield* Llm
  const workspace = yield* Workspace
  const { file, loaded } = yield* MyclawConfig
  const startedAt = yield* Clock.currentTimeMillis
  return Effect.map(Clock.currentTimeMillis, (now): HealthReport => {
    const problems = llm.providers.length === 0
      ? [`no LLM provider is configured: add one under "tiers" in ${file}`]
      : []
    return {
      status: problems.length === 0 ? "ok" : "degraded",
      version,
      uptime_s: Math.floor((now - startedAt) / 1000),
      pid: process.pid,
      workspace: { root: workspace.root, config_file: file, config_loaded: loaded },
      llm: { configured: llm.providers.length > 0, providers: llm.providers },
      problems
    }
  })
})
