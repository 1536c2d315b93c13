import { Context } from "effect"
import type { Effect } from "effect"

/**
 * What an id names. `trace`: a turn; `wrapper`: one `<untrusted>` wrapper (must be unguessable by the content
 * it wraps); `approval`: an approval request; `reservation`: a budget reservation; `session`: a session opened
 * without an id (the channel adds its prefix).
 */
export type IdKind = "trace" | "wrapper" | "approval" | "reservation" | "session"

/**
 * Every id that ends up in a prompt, a trace or a record comes from here, so that a test or a replay can make
 * them reproducible. Approval nonces are secrets, not ids: they never come from here.
 */
export class IdGenerator extends Context.Tag("myclaw/IdGenerator")<IdGenerator, {
  readonly next: (kind: IdKind) => Effect.Effect<string>
}>() {}
