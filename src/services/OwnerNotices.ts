import { Context } from "effect"
import type { Effect, Scope } from "effect"

/**
 * What brings a message to the owner outside any turn (the daily digest): the owner's channels register while
 * they run (their scope); the log has it in any case.
 */
export class OwnerNotices extends Context.Tag("myclaw/OwnerNotices")<OwnerNotices, {
  /** `send` takes notices to the owner on the channel `name` (e.g. `telegram`) for the rest of the scope. */
  readonly register: (
    name: string,
    send: (text: string) => Effect.Effect<void>
  ) => Effect.Effect<void, never, Scope.Scope>
  /** Sends `text` on every registered channel; the channels it went to. */
  readonly notify: (text: string) => Effect.Effect<ReadonlyArray<string>>
}>() {}
