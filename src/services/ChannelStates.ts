import { Context } from "effect"
import type { Effect } from "effect"

/** What a channel reports of itself: working (how: `polling`, `webhook`), or failing and why (for the owner). */
export type ChannelState =
  | { readonly _tag: "Working"; readonly how: string }
  | { readonly _tag: "Failing"; readonly why: string; readonly since: number }

/** The channels' own states, as they last reported them (what /health shows of each). */
export class ChannelStates extends Context.Tag("myclaw/ChannelStates")<ChannelStates, {
  readonly report: (channel: string, state: ChannelState) => Effect.Effect<void>
  readonly get: (channel: string) => Effect.Effect<ChannelState | undefined>
}>() {}
