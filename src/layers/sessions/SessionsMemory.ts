import { Clock, Effect, Layer, Option, Ref } from "effect"
import {
  channelKind,
  forbidden,
  SessionError,
  type SessionInfo,
  type SessionSummary,
  type SessionTurn,
  storedTurn
} from "../../domain/Session.js"
import { IdGenerator } from "../../services/IdGenerator.js"
import { Sessions } from "../../services/Sessions.js"

interface Stored {
  readonly info: Omit<SessionInfo, "turns" | "summaries">
  readonly turns: ReadonlyArray<SessionTurn>
  readonly summaries: ReadonlyArray<SessionSummary>
  /** When its turns were last forgotten (epoch milliseconds). */
  readonly forgottenThrough?: number
}

const infoOf = (stored: Stored): SessionInfo => ({
  ...stored.info,
  turns: stored.turns.length,
  summaries: stored.summaries.length
})

/** Sessions in memory, for tests: gone with the layer. */
export const SessionsMemory = Layer.effect(
  Sessions,
  Effect.gen(function*() {
    const ids = yield* IdGenerator
    const state = yield* Ref.make(new Map<string, Stored>())
    const update = (f: (map: Map<string, Stored>) => void) =>
      Ref.update(state, (map) => {
        const next = new Map(map)
        f(next)
        return next
      })
    const get = (sessionId: string) => Effect.map(Ref.get(state), (map) => map.get(sessionId))

    return Sessions.of({
      history: (sessionId, owner) =>
        Effect.flatMap(get(sessionId), (stored) => {
          if (stored === undefined) return Effect.succeed({ summary: null, turns: [] })
          if (stored.info.owner !== owner) return Effect.fail(forbidden(sessionId))
          const summary = stored.summaries.at(-1) ?? null
          const after = summary?.covers_through ?? 0
          return Effect.succeed({ summary, turns: stored.turns.filter((turn) => turn.seq > after) })
        }),
      recordTurn: (turn) =>
        Effect.flatMap(get(turn.sessionId), (stored) => {
          if (stored !== undefined && stored.info.owner !== turn.owner) return Effect.fail(forbidden(turn.sessionId))
          const info = stored?.info ??
            {
              id: turn.sessionId,
              channel: channelKind(turn.owner),
              owner: turn.owner,
              created_at: turn.at,
              last_active_at: turn.at
            }
          const turns = stored?.turns ?? []
          // A turn is in its session once.
          if (turns.some((recorded) => recorded.trace_id === turn.traceId)) return Effect.void
          const added: SessionTurn = { seq: (turns.at(-1)?.seq ?? 0) + 1, ...storedTurn(turn) }
          return update((map) =>
            map.set(turn.sessionId, {
              info: { ...info, last_active_at: Math.max(info.last_active_at, turn.at) },
              turns: [...turns, added],
              summaries: stored?.summaries ?? []
            })
          )
        }),
      reown: (sessionId, owner, mayTake) =>
        Effect.flatMap(get(sessionId), (stored) => {
          if (stored === undefined || stored.info.owner === owner || !mayTake(stored.info.owner)) {
            return Effect.succeed(stored?.info.owner)
          }
          return Effect.as(
            update((map) => map.set(sessionId, { ...stored, info: { ...stored.info, owner } })),
            owner
          )
        }),
      addSummary: (sessionId, summary) =>
        update((map) => {
          const stored = map.get(sessionId)
          if (stored === undefined) return
          const others = stored.summaries.filter((s) => s.covers_through !== summary.covers_through)
          map.set(sessionId, {
            ...stored,
            summaries: [...others, summary].sort((a, b) => a.covers_through - b.covers_through)
          })
        }),
      startNew: (channel, owner) =>
        Effect.gen(function*() {
          const id = `${channel}-${yield* ids.next("session")}`
          const at = yield* Clock.currentTimeMillis
          yield* update((map) => {
            map.set(id, { info: { id, channel, owner, created_at: at, last_active_at: at }, turns: [], summaries: [] })
          })
          return id
        }),
      list: Effect.map(
        Ref.get(state),
        (map) =>
          [...map.values()].map(infoOf).sort((a, b) =>
            b.last_active_at - a.last_active_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
          )
      ),
      show: (sessionId) =>
        Effect.map(get(sessionId), (stored) =>
          stored === undefined
            ? Option.none()
            : Option.some({ info: infoOf(stored), turns: stored.turns, summaries: stored.summaries })),
      forget: (sessionId) =>
        Effect.flatMap(get(sessionId), (stored) => {
          if (stored === undefined) {
            return Effect.fail(new SessionError({ sessionId, reason: "NotFound", message: `no session ${sessionId}` }))
          }
          return Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.as(
              update((map) =>
                map.set(sessionId, {
                  ...stored,
                  turns: [],
                  summaries: [],
                  forgottenThrough: Math.max(stored.forgottenThrough ?? 0, now)
                })
              ),
              stored.turns.length
            ))
        }),
      unrecorded: (turns) =>
        Effect.map(Ref.get(state), (map) =>
          turns.filter(({ sessionId, startedAt, traceId }) => {
            const stored = map.get(sessionId)
            if (stored === undefined) return true
            if (stored.turns.some((turn) => turn.trace_id === traceId)) return false
            return stored.forgottenThrough === undefined || startedAt > stored.forgottenThrough
          }).map((turn) => turn.traceId))
    })
  })
)
