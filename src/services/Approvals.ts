import { Context } from "effect"
import type { Effect } from "effect"
import type { AnsweringChannel, ApprovalVia } from "../domain/ApprovalVia.js"

export interface ApprovalRequest {
  readonly tool: string
  /** One line for a human: `write 120 bytes to notes/todo.md`. */
  readonly summary: string
  readonly target: string
  /** `tool:target`; batch grants match on the tool and a glob of the target. */
  readonly effectClass: string
  /** The exact arguments that will run if granted. */
  readonly args: unknown
  /** sha256 of the canonical JSON of `args`: what is executed must hash the same. */
  readonly argsHash: string
  /** Why the policy asks (its rule and reason). */
  readonly reason: string
  readonly sessionId: string
  readonly traceId: string
  readonly channel: string
  /** Who asked: the owner of the session (e.g. `cli:alice`); only they may answer. */
  readonly requester: string
  /** Set when the turn carries untrusted content: a fresh answer is needed (no grant covers it), and the question says so. */
  readonly tainted: { readonly sources: ReadonlyArray<string> } | null
  /** The target is a command line: a standing grant covers it only when it names this exact text (a glob never). */
  readonly exactTarget?: boolean | undefined
}

export interface ApprovalVerdict {
  readonly granted: boolean
  /** The channel the owner answered on, the grant that covered it, or why the runtime decided alone. */
  readonly via: ApprovalVia
  readonly reason: string
  /** The request this verdict answers; null when no request was made (e.g. the pending limit). */
  readonly requestId: string | null
  /** The hash of the arguments that were approved. */
  readonly argsHash: string
}

/** The longest window a grant for N minutes opens: a day (longer is what a session grant is for). */
export const MAX_GRANT_MINUTES = 24 * 60

/** How the owner answered: deny, or grant once, for N minutes (same tool, same target glob), or for the session. */
export type ApprovalDecision =
  | { readonly _tag: "Deny" }
  | { readonly _tag: "Once" }
  | { readonly _tag: "ForMinutes"; readonly minutes: number; readonly targetGlob?: string | undefined }
  | { readonly _tag: "ForSession"; readonly targetGlob?: string | undefined }

export interface ApprovalAnswer {
  readonly requestId: string
  readonly nonce: string
  /** Who answered, in the requester's form (`cli:alice`, `telegram:12345`). */
  readonly answerer: string
  readonly decision: ApprovalDecision
  /**
   * The channel the owner answered on; `non_interactive` when the turn's channel could not ask, `no_channel`
   * when no channel at all could (both deny).
   */
  readonly via: AnsweringChannel | "non_interactive" | "no_channel"
  /** The channel's words for the verdict (e.g. why it denied on its own); a default is used without it. */
  readonly reason?: string | undefined
}

export type AnswerOutcome =
  | { readonly accepted: true }
  | {
    readonly accepted: false
    readonly reason: "unknown" | "nonce_mismatch" | "foreign" | "expired" | "already_answered"
  }

/** A request waiting for its answer, as a channel shows it. */
export interface PendingApproval {
  readonly requestId: string
  readonly nonce: string
  /** Epoch milliseconds; an answer after it is refused and the request counts as denied. */
  readonly expiresAt: number
  readonly request: ApprovalRequest
}

/**
 * Approvals: bound to the owner, the session and the trace by a nonce; an answer counts once,
 * before expiry, from the owner; the arguments executed are the arguments approved.
 */
export class Approvals extends Context.Tag("myclaw/Approvals")<Approvals, {
  readonly request: (request: ApprovalRequest) => Effect.Effect<ApprovalVerdict>
  /** The requests waiting for an answer now, oldest first (what an answering channel lists). */
  readonly pending: Effect.Effect<ReadonlyArray<PendingApproval>>
  /** An answer from a channel (a button press, a typed reply); refused answers are audited and change nothing. */
  readonly answer: (answer: ApprovalAnswer) => Effect.Effect<AnswerOutcome>
}>() {}
