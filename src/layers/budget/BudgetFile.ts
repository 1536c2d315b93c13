import { Effect, Schema } from "effect"
import * as NodeFs from "node:fs/promises"
import type { BudgetDay } from "../../domain/BudgetLedger.js"
import { onFirstCall } from "../../domain/OnFirstCall.js"

/** budget.json, where earlier versions kept the day's counters: read once, to carry them into the database. */
const BudgetJson = Schema.Struct({
  version: Schema.Literal(1),
  day: Schema.String.pipe(Schema.pattern(/^\d{4}-\d{2}-\d{2}$/)),
  time_zone: Schema.String,
  spent_eur: Schema.Number.pipe(Schema.nonNegative()),
  reservations: Schema.Record({ key: Schema.String, value: Schema.Number.pipe(Schema.nonNegative()) }),
  override_until: Schema.NullOr(Schema.Number),
  soft_notice_given: Schema.Boolean,
  updated_at: Schema.String
})
const decodeBudgetJson = onFirstCall(() => Schema.decodeUnknownEither(Schema.parseJson(BudgetJson)))

export type LoadResult =
  | { readonly _tag: "Loaded"; readonly day: BudgetDay; readonly inFlightEur: number }
  | { readonly _tag: "Missing" }
  | { readonly _tag: "Corrupt"; readonly detail: string }

/** The counters of budget.json; the calls it held in flight are summed (they never settled). */
export const loadBudgetFile = (file: string) =>
  Effect.promise(async (): Promise<LoadResult> => {
    let text: string
    try {
      text = await NodeFs.readFile(file, "utf8")
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "ENOENT"
        ? { _tag: "Missing" }
        : { _tag: "Corrupt", detail: String(error) }
    }
    const decoded = decodeBudgetJson(text)
    if (decoded._tag === "Left") {
      return { _tag: "Corrupt", detail: decoded.left.message.split("\n").slice(0, 4).join(" ") }
    }
    const json = decoded.right
    return {
      _tag: "Loaded",
      day: {
        day: json.day,
        spentEur: json.spent_eur,
        overrideUntil: json.override_until,
        softNoticeGiven: json.soft_notice_given
      },
      inFlightEur: Object.values(json.reservations).reduce((total, eur) => total + eur, 0)
    }
  })
