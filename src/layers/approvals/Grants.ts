import { Effect } from "effect"
import { globToRegExp } from "../../domain/Glob.js"

/** A scoped grant: later calls of the same tool in the same session, on a matching target, need no question. */
export interface Grant {
  readonly requestId: string
  readonly sessionId: string
  readonly tool: string
  /** The owner's glob, or null for exactly the approved target. */
  readonly targetGlob: string | null
  readonly target: string
  /** Epoch milliseconds; null for the rest of the session (this process). */
  readonly expiresAt: number | null
}

export const grantEffectClass = (grant: Grant): string => `${grant.tool}:${grant.targetGlob ?? grant.target}`

/** With `exact` (a command line), only a grant whose scope is that very text covers the target: no glob does. */
const covers = (grant: Grant, sessionId: string, tool: string, target: string, now: number, exact: boolean) =>
  grant.sessionId === sessionId &&
  grant.tool === tool &&
  (grant.expiresAt === null || now < grant.expiresAt) &&
  (exact
    ? (grant.targetGlob ?? grant.target) === target
    : grant.targetGlob === null
    ? grant.target === target
    : globToRegExp(grant.targetGlob).test(target))

/** Grants live in memory only: they end with their window, and with the process. */
export const makeGrants = Effect.sync(() => {
  const bySession = new Map<string, Array<Grant>>()

  const open = (grant: Grant) =>
    Effect.sync(() => {
      bySession.set(grant.sessionId, [...(bySession.get(grant.sessionId) ?? []), grant])
    })

  const find = (sessionId: string, tool: string, target: string, now: number, exact = false) =>
    Effect.sync(() => {
      const live = (bySession.get(sessionId) ?? []).filter((grant) => grant.expiresAt === null || now < grant.expiresAt)
      if (live.length === 0) bySession.delete(sessionId)
      else bySession.set(sessionId, live)
      return live.find((grant) => covers(grant, sessionId, tool, target, now, exact))
    })

  return { open, find } as const
})
