import { Console, Effect, Option } from "effect"
import type { CachedPlan } from "../domain/CachedPlan.js"
import { PlanCache } from "../services/PlanCache.js"
import { printForPeople } from "./Output.js"

const line = (plan: CachedPlan): string =>
  `${plan.id}  ${plan.successes} ok / ${plan.failures} fallback  ${plan.plan.steps.length} step(s) ` +
  `[${plan.plan.steps.map((step) => step.tool).join(", ")}]  "${plan.request}"`

/** `myclaw plans list | show ID | forget ID`: the cached plans, one in full, or one dropped. */
export const plansCommand = (
  options: { readonly action: "list" | "show" | "forget"; readonly id: string | undefined }
) =>
  Effect.gen(function*() {
    const cache = yield* PlanCache
    if (options.action === "list") {
      const plans = yield* cache.list
      yield* printForPeople(plans.length === 0 ? "No cached plans." : plans.map(line).join("\n"))
      return 0
    }
    const id = options.id ?? ""
    if (options.action === "show") {
      const plan = yield* cache.get(id)
      if (Option.isNone(plan)) {
        return yield* Effect.as(Console.error(`myclaw: no cached plan ${id} (see myclaw plans list)`), 1)
      }
      yield* Console.log(JSON.stringify(plan.value, null, 2))
      return 0
    }
    if (!(yield* cache.forget(id))) {
      return yield* Effect.as(Console.error(`myclaw: no cached plan ${id} (see myclaw plans list)`), 1)
    }
    yield* Console.log(`Forgot ${id}: the next such request goes to the model again.`)
    return 0
  })
