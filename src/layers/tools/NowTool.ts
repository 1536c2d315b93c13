import { Clock, Effect, Schema } from "effect"
import { defineTool } from "../../domain/Tool.js"

/** The current time, from the Effect Clock (so tests control it). */
export const nowTool = defineTool({
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
      const local = date.toLocaleString("sv-SE", { timeZone: zone })
      return { status: "success", content: `${date.toISOString()} (local ${local} ${zone})` } as const
    })
})
