import { Context } from "effect"
import type { Effect, Option, Scope } from "effect"
import type { AnsweringChannel } from "../domain/ApprovalVia.js"
import type { ApprovalAnswer, PendingApproval } from "./Approvals.js"

/** A channel able to put a request before the owner. */
export interface ApprovalAsker {
  readonly via: AnsweringChannel
  /** Some answer when it is at hand (a terminal prompt); None when it comes later through `Approvals.answer`. */
  readonly present: (pending: PendingApproval) => Effect.Effect<Option.Option<ApprovalAnswer>>
  /** Who answers through it as the owner (`http:admin`, `telegram:12345`), whatever channel the turn came from. */
  readonly owners: ReadonlyArray<string>
}

/**
 * Approvals are asked on the channel the turn came from. A turn from a channel that cannot ask (HTTP, a detached
 * service) waits until expiry for an answer from any of the owner's answering channels; with none at all it is
 * denied at once, saying so. Channels register while they run (their scope).
 */
export class ApprovalRouter extends Context.Tag("myclaw/ApprovalRouter")<ApprovalRouter, {
  /** Requests of turns from channels of `kind` (`cli`, `telegram`; `*` for every kind without its own) go to `asker`. */
  readonly askOn: (kind: string, asker: ApprovalAsker) => Effect.Effect<void, never, Scope.Scope>
  /** `asker` also answers requests of turns whose channel cannot ask. */
  readonly answerFrom: (asker: ApprovalAsker) => Effect.Effect<void, never, Scope.Scope>
  /** The answering channels registered now. */
  readonly answering: Effect.Effect<ReadonlyArray<AnsweringChannel>>
}>() {}
