import { Clock, Effect, Schema } from "effect"
import { defineTool } from "../../domain/Tool.js"

const wallTime = (date: Date, timeZone: string): string => date.toLocaleString("sv-SE", { timeZone })

/**
 * The current time, from the Effect Clock (so tests control it): UTC and the machine's zone, as its description
 * says, and the owner's (`budget.timeZone`, the zone of their day) where its clock reads otherwise, as on a server
 * kept in UTC. The description is left as it was: it is part of every recorded request's fingerprint.
 */
export const makeNowTool = (ownerZone: string) =>
  defineTool({
    name: "now",
    description: "The current date and time (UTC, and the machine's local time zone).",
    parameters: Schema.Struct({}),
    hasSideEffects: false,
    external: false,
    summarize: () => "read the clock",
    execute: () =>
      Effect.map(Clock.currentTimeMillis, (millis) => {
        const date = new Date(millis)
        const zone = Intl.DateTimeFormat().resolvedOptions().timeZone
        const local = wallTime(date, zone)
        const owner = wallTime(date, ownerZone)
        const owners = owner === local ? "" : `; for the owner, in ${ownerZone}: ${owner}`
        return { status: "success", content: `${date.toISOString()} (local ${local} ${zone}${owners})` } as const
      })
  })
