import { Clock, Console, Effect, Option } from "effect"
import * as NodeOs from "node:os"
import type { SessionInfo, SessionTurn } from "../domain/Session.js"
import { truncateEnd } from "../domain/Text.js"
import { isoAt } from "../domain/Time.js"
import { AuditLog } from "../services/AuditLog.js"
import { PlanCache } from "../services/PlanCache.js"
import { type SessionDetail, Sessions } from "../services/Sessions.js"
import { printForPeople } from "./Output.js"

const excerpt = (text: string | null, max = 80): string => {
  if (text === null) return "(no answer)"
  const line = text.replace(/\s+/g, " ").trim()
  return line.length <= max ? line : truncateEnd(line, max - 1)
}

/** The share of the prompt tokens read from the provider's cache, when any prompt tokens were counted. */
export const cacheShare = (turns: ReadonlyArray<SessionTurn>): number | null => {
  const input = turns.reduce((sum, turn) => sum + turn.prompt_tokens, 0)
  const cached = turns.reduce((sum, turn) => sum + turn.cached_tokens, 0)
  return input === 0 ? null : cached / input
}

const infoLine = (info: SessionInfo): string =>
  `${info.id}  ${info.owner}  ${info.turns} turns  last active ${isoAt(info.last_active_at)}`

export const renderSession = (detail: SessionDetail): string => {
  const { info, summaries, turns } = detail
  const share = cacheShare(turns)
  const tokens = (pick: (turn: SessionTurn) => number) => turns.reduce((sum, turn) => sum + pick(turn), 0)
  return [
    `session      ${info.id}`,
    `owner        ${info.owner} (channel ${info.channel})`,
    `created      ${isoAt(info.created_at)}`,
    `last active  ${isoAt(info.last_active_at)}`,
    `turns        ${turns.length} stored, ${summaries.length} summaries`,
    `tokens       ${tokens((turn) => turn.prompt_tokens)} prompt (${
      tokens((turn) => turn.cached_tokens)
    } read from the cache), ${tokens((turn) => turn.response_tokens)} response`,
    `cache share  ${share === null ? "unknown (no prompt tokens counted)" : `${(share * 100).toFixed(1)}%`}`,
    ...summaries.map((summary) => `summary of turns 1-${summary.covers_through}: ${excerpt(summary.text, 200)}`),
    ...turns.map((turn) =>
      `#${turn.seq} ${isoAt(turn.at)} trace ${turn.trace_id}\n  > ${excerpt(turn.user_message)}\n  < ${
        excerpt(turn.final_response)
      }`
    )
  ].join("\n")
}

/** `myclaw sessions list`: every session, the most recently active first. */
export const sessionsList = Effect.gen(function*() {
  const listed = yield* (yield* Sessions).list
  yield* printForPeople(listed.length === 0 ? "no sessions" : listed.map(infoLine).join("\n"))
  return 0
})

/** `myclaw sessions show ID`: the session, its summaries, its turns and the cache share of its prompts. */
export const sessionsShow = (sessionId: string) =>
  Effect.gen(function*() {
    const shown = yield* (yield* Sessions).show(sessionId)
    if (Option.isNone(shown)) {
      yield* Console.error(`myclaw: no session ${JSON.stringify(sessionId)} (myclaw sessions list shows them)`)
      return 1
    }
    yield* printForPeople(renderSession(shown.value))
    return 0
  })

const cliSender = (): string => {
  try {
    return `cli:${NodeOs.userInfo().username}`
  } catch {
    return "cli"
  }
}

/**
 * `myclaw sessions forget ID`: the session's stored turns and summaries are deleted, and the cached plans its turns
 * made (each holds a request and an answer of the session); its traces and audit records stay. The deletion is an
 * audit record.
 */
export const sessionsForget = (sessionId: string) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions
    const audit = yield* AuditLog
    const shown = yield* sessions.show(sessionId)
    if (Option.isNone(shown)) {
      yield* Console.error(`myclaw: no session ${JSON.stringify(sessionId)} (myclaw sessions list shows them)`)
      return 1
    }
    // Refused before anything is deleted when the deletion cannot be recorded.
    yield* audit.ready
    const deleted = yield* sessions.forget(sessionId)
    const made = shown.value.turns.map((turn) => turn.trace_id)
    const plans = yield* (yield* PlanCache).forgetMadeBy(made).pipe(
      Effect.catchAll((error) =>
        Effect.as(
          Console.error(
            `myclaw: the cached plans made from its turns were not dropped (${error.message}); myclaw plans list ` +
              "shows them and myclaw plans forget ID drops one"
          ),
          0
        )
      )
    )
    yield* audit.append({
      kind: "session_forgotten",
      at: isoAt(yield* Clock.currentTimeMillis),
      sender: cliSender(),
      session_id: sessionId,
      owner: shown.value.info.owner,
      turns_deleted: deleted
    })
    yield* Console.log(
      `session ${sessionId}: ${deleted} turns and their summaries deleted, and ${plans} cached plan${
        plans === 1 ? "" : "s"
      } made from them; its traces and audit records stay`
    )
    return 0
  })
