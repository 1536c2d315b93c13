import { Clock, Effect } from "effect"
import { localDay } from "../domain/Time.js"
import { dailyDigest } from "../programs/Digest.js"
import { isDigestDay } from "../programs/digest/DigestText.js"
import { MyclawConfig } from "../services/MyclawConfig.js"
import { UsageError } from "./Args.js"
import { printForPeople } from "./Output.js"

/**
 * `myclaw digest [today|YYYY-MM-DD]`: the day's digest from the audit log on stdout. `polish` (default on)
 * lets the local-fast tier rephrase it; the numbers never change, and without an LLM the plain text comes out.
 */
export const digestCommand = (options: { readonly day: string; readonly polish?: boolean | undefined }) =>
  Effect.gen(function*() {
    if (!isDigestDay(options.day)) {
      return yield* new UsageError({
        message: `digest: expected today or a day as YYYY-MM-DD, got ${JSON.stringify(options.day)}`
      })
    }
    const { config } = yield* MyclawConfig
    const today = localDay(yield* Clock.currentTimeMillis, config.budget.timeZone)
    if (options.day !== "today" && options.day > today) {
      return yield* new UsageError({
        message: `digest: ${options.day} is in the future (today is ${today} in ${config.budget.timeZone})`
      })
    }
    const digest = yield* dailyDigest({ day: options.day, polish: options.polish ?? true })
    yield* printForPeople(digest.text)
  })
