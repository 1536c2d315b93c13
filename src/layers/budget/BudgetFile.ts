import { Effect, Schema } from "effect"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { syncPath } from "../../domain/FileSync.js"
import { isoAt } from "../../domain/Time.js"
import type { BudgetState } from "./BudgetCore.js"

/** budget.json on disk (snake_case, like every file myclaw writes). */
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
const decodeBudgetJson = Schema.decodeUnknownEither(Schema.parseJson(BudgetJson))

export type LoadResult =
  | { readonly _tag: "Loaded"; readonly state: BudgetState }
  | { readonly _tag: "Missing" }
  | { readonly _tag: "Corrupt"; readonly detail: string }

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
      state: {
        day: json.day,
        spentEur: json.spent_eur,
        reservations: json.reservations,
        overrideUntil: json.override_until,
        softNoticeGiven: json.soft_notice_given
      }
    }
  })

/** Atomic: a temporary file, synced, renamed over budget.json, and the folder synced. */
export const saveBudgetFile = (file: string, timeZone: string, state: BudgetState, now: number) =>
  Effect.tryPromise(async () => {
    const temp = `${file}.${process.pid}.tmp`
    const json = {
      version: 1,
      day: state.day,
      time_zone: timeZone,
      spent_eur: state.spentEur,
      reservations: state.reservations,
      override_until: state.overrideUntil,
      soft_notice_given: state.softNoticeGiven,
      updated_at: isoAt(now)
    }
    const handle = await NodeFs.open(temp, "w", 0o600)
    try {
      await handle.writeFile(JSON.stringify(json, null, 2) + "\n")
      await handle.sync()
    } finally {
      await handle.close()
    }
    await NodeFs.rename(temp, file)
    await syncPath(NodePath.dirname(file))
  })
