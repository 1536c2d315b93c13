import { Context } from "effect"
import type { Effect, Option } from "effect"
import type { CachedPlan, NewPlan } from "../domain/CachedPlan.js"
import type { PlanCacheError } from "../domain/PlanCacheError.js"

/** Plans that worked, by normalised request, in this workspace: what the fast path may reuse. */
export class PlanCache extends Context.Tag("myclaw/PlanCache")<PlanCache, {
  readonly lookup: (request: string) => Effect.Effect<Option.Option<CachedPlan>, PlanCacheError>
  /**
   * Keeps a plan for its request: the same plan again counts one more success, another plan replaces the old
   * one (its counts start again).
   */
  readonly save: (plan: NewPlan, now: number) => Effect.Effect<CachedPlan, PlanCacheError>
  /** A reuse that served the request (success) or had to fall back. */
  readonly used: (id: string, succeeded: boolean, now: number) => Effect.Effect<void, PlanCacheError>
  readonly list: Effect.Effect<ReadonlyArray<CachedPlan>, PlanCacheError>
  readonly get: (id: string) => Effect.Effect<Option.Option<CachedPlan>, PlanCacheError>
  /** True when there was such a plan. */
  readonly forget: (id: string) => Effect.Effect<boolean, PlanCacheError>
  /** Drops the plans these turns made (by their trace ids): a forgotten session's requests go with it. How many. */
  readonly forgetMadeBy: (traceIds: ReadonlyArray<string>) => Effect.Effect<number, PlanCacheError>
}>() {}
