import { Clock, Effect, Layer } from "effect"
import { budgetExceededMessage } from "../domain/Errors.js"
import { isoAt, localDay, localDayBounds } from "../domain/Time.js"
import { AuditLog } from "../services/AuditLog.js"
import { Llm } from "../services/Llm.js"
import { MyclawConfig } from "../services/MyclawConfig.js"
import { OwnerNotices } from "../services/OwnerNotices.js"
import { everyDay } from "./Daily.js"
import { digestFacts, isDigestDay, keepsNumbers, renderDigest } from "./digest/DigestText.js"

const polishPrompt = "Rewrite this daily activity report of a personal assistant so that it reads well, in English, " +
  "keeping its sections and emoji. Keep every number, date and time exactly as written and add no number. " +
  "Answer with the report only."

/** An optional rephrasing on the local-fast tier; any failure, or a changed number, keeps the deterministic text. */
export const polishDigest = (text: string) =>
  Effect.gen(function*() {
    const llm = yield* Llm
    const response = yield* llm.generate({
      tier: "local-fast",
      system: [{ name: "digest", text: polishPrompt, stable: true }],
      messages: [{ role: "user", content: text }],
      tools: [],
      maxTokens: 1500
    }).pipe(Effect.timeout("60 seconds"), Effect.either)
    if (response._tag === "Left") {
      const why = response.left._tag === "BudgetExceeded" ? budgetExceededMessage(response.left) : response.left.message
      yield* Effect.logWarning(`digest: kept the plain text, the LLM polish failed: ${why}`)
      return { text, polished: false }
    }
    const paid = response.right
    // A paid call outside a turn has no trace: its own audit record keeps the day's spend complete.
    yield* (yield* AuditLog).append({
      kind: "llm_call",
      at: isoAt(yield* Clock.currentTimeMillis),
      purpose: "digest_polish",
      provider: paid.provider,
      model: paid.model,
      tier: paid.tier,
      input_tokens: paid.usage.input,
      output_tokens: paid.usage.output,
      cost_usd: paid.costUsd
    }).pipe(
      Effect.catchAll((error) => Effect.logError(`digest: the polish call's cost was not audited: ${error.message}`))
    )
    const candidate = response.right.text.trim()
    if (candidate === "" || !keepsNumbers(text, candidate)) {
      yield* Effect.logWarning("digest: kept the plain text, the LLM polish changed a number")
      return { text, polished: false }
    }
    return { text: candidate, polished: true }
  })

export interface DigestOptions {
  /** `today` or `YYYY-MM-DD`, in the budget's time zone; the CLI checks it with `isDigestDay`. */
  readonly day: string
  /** Let the local-fast tier rephrase the text (when an LLM is configured). */
  readonly polish: boolean
}

/** The digest of a day from the audit log: the facts, the plain text, and the text to send. */
export const dailyDigest = Effect.fn("Digest.daily")(function*(options: DigestOptions) {
  const { config } = yield* MyclawConfig
  const audit = yield* AuditLog
  const timeZone = config.budget.timeZone
  if (!isDigestDay(options.day)) return yield* Effect.dieMessage(`digest: not a day: ${options.day}`)
  const day = options.day === "today" ? localDay(yield* Clock.currentTimeMillis, timeZone) : options.day
  const records = yield* audit.query({ ...localDayBounds(day, timeZone), limit: Number.MAX_SAFE_INTEGER })
  const facts = digestFacts(day, records, { timeZone, usdToEur: config.usdToEur, softCapEur: config.budget.softCapEur })
  const plain = renderDigest(facts)
  // A day without requests has nothing worth a paid rephrasing.
  const polished = options.polish && facts.requests > 0 && (yield* Llm).providers.length > 0
    ? yield* polishDigest(plain)
    : { text: plain, polished: false }
  return { day, facts, plain, ...polished }
})

export type Digest = Effect.Effect.Success<ReturnType<typeof dailyDigest>>

/** Before noon the digest is of the day before (a morning digest), from noon on of the day itself. */
const digestDayAt = (millis: number, timeZone: string): string =>
  Number(new Intl.DateTimeFormat("en-GB", { timeZone, hour: "2-digit", hourCycle: "h23" }).format(millis)) < 12
    ? localDay(localDayBounds(localDay(millis, timeZone), timeZone).since - 1, timeZone)
    : localDay(millis, timeZone)

/** Sends the digest every day at `digest.dailyAt` in the budget's time zone, for as long as the layer lives. */
export const DigestSchedule = <R>(deliver: (digest: Digest) => Effect.Effect<void, never, R>) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const { config } = yield* MyclawConfig
    const context = yield* Effect.context<AuditLog | MyclawConfig | Llm | R>()
    const dailyAt = config.digest.dailyAt
    if (dailyAt === null) return yield* Effect.logInfo("daily digest off: digest.dailyAt is null")
    const timeZone = config.budget.timeZone
    const once = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      yield* Effect.flatMap(dailyDigest({ day: digestDayAt(now, timeZone), polish: true }), deliver)
    })
    yield* Effect.forkScoped(Effect.provide(everyDay(dailyAt, timeZone, "daily digest", once), context))
  }))

/** Delivery to the log. */
export const logDigest = (digest: Digest) =>
  Effect.logInfo(digest.text).pipe(Effect.annotateLogs({ digest_day: digest.day, polished: digest.polished }))

/** Delivery to the log, and to the owner on each of the owner's channels that runs (Telegram). */
export const deliverDigest = (digest: Digest) =>
  Effect.zipRight(
    logDigest(digest),
    Effect.flatMap(OwnerNotices, (notices) =>
      Effect.flatMap(notices.notify(digest.text), (channels) =>
        channels.length === 0
          ? Effect.void
          : Effect.logInfo(`daily digest of ${digest.day} sent to the owner on ${channels.join(", ")}`)))
  )

/** What `myclaw serve` runs: the daily digest, delivered to the log and to the owner's channels. */
export const DigestScheduleLive = DigestSchedule(deliverDigest)
