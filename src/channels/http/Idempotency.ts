import type { HttpServerResponse } from "@effect/platform"
import { Clock, Deferred, Effect, Either, Exit, FiberId, FiberSet, Option } from "effect"

/** How long the answer to a key is kept, and how many keys at most (the oldest are forgotten first). */
export const KEY_TTL_MS = 24 * 3_600_000
export const MAX_KEYS = 10_000

/**
 * The `Idempotency-Key` header: none, the key (a structured-field string in quotes, or bare), or what is wrong
 * with it. The key itself is never echoed: it is the caller's.
 */
export const idempotencyKeyOf = (header: string | undefined): Either.Either<Option.Option<string>, string> => {
  if (header === undefined) return Either.right(Option.none())
  const quoted = /^"(.*)"$/s.exec(header)
  const key = quoted === null ? header : quoted[1]!
  return /^[\x21\x23-\x5b\x5d-\x7e]{1,255}$/.test(key)
    ? Either.right(Option.some(key))
    : Either.left(
      "the Idempotency-Key header must be 1 to 255 visible ASCII characters, without quotes or backslashes " +
        "inside (a UUID will do), bare or in quotes"
    )
}

/** What a request ended with, and what a retry with its key is given later (undefined: nothing, it runs again). */
export interface Answered<Kept> {
  readonly response: HttpServerResponse.HttpServerResponse
  readonly kept: Kept | undefined
}

interface Entry<Kept> {
  readonly fingerprint: string
  readonly at: number
  state:
    | { readonly _tag: "Running"; readonly answer: Deferred.Deferred<Answered<Kept>> }
    | { readonly _tag: "Kept"; readonly kept: Kept }
}

export type Outcome<Kept> =
  | { readonly _tag: "Answered"; readonly answered: Answered<Kept> }
  | { readonly _tag: "Replay"; readonly kept: Kept }
  | { readonly _tag: "Joined"; readonly answered: Answered<Kept> }
  | { readonly _tag: "Reused" }

/**
 * Requests made once per key: the first runs its work to its end even when its caller goes away (the retry is
 * the caller coming back), a retry while it runs waits for it, one after it gets what it kept. A key sent again
 * with another request is refused. Keys live KEY_TTL_MS after their first request, at most MAX_KEYS of them.
 */
export const makeIdempotency = <Kept>() =>
  Effect.gen(function*() {
    // In insertion order, which is the order of their first request: the oldest are first.
    const entries = new Map<string, Entry<Kept>>()
    const detached = yield* FiberSet.make<void>()

    const forgetOld = (now: number) => {
      for (const [key, entry] of entries) {
        if (now - entry.at < KEY_TTL_MS && entries.size < MAX_KEYS) break
        entries.delete(key)
      }
    }

    const once = <R>(
      key: string,
      fingerprint: string,
      work: Effect.Effect<Answered<Kept>, never, R>
    ): Effect.Effect<Outcome<Kept>, never, R> =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        // From the look-up to the entry, nothing yields: two requests with one key never both run.
        forgetOld(now)
        const known = entries.get(key)
        if (known !== undefined) {
          if (known.fingerprint !== fingerprint) return { _tag: "Reused" } as const
          if (known.state._tag === "Kept") return { _tag: "Replay", kept: known.state.kept } as const
          return { _tag: "Joined", answered: yield* Deferred.await(known.state.answer) } as const
        }
        const answer = Deferred.unsafeMake<Answered<Kept>>(FiberId.none)
        const entry: Entry<Kept> = { fingerprint, at: now, state: { _tag: "Running", answer } }
        entries.set(key, entry)
        // Detached from this request: its caller going away leaves the work running for the retry.
        yield* FiberSet.run(
          detached,
          work.pipe(
            Effect.onExit((exit) =>
              Effect.suspend(() => {
                const kept = Exit.isSuccess(exit) ? exit.value.kept : undefined
                if (kept === undefined) entries.delete(key)
                else entry.state = { _tag: "Kept", kept }
                return Exit.isSuccess(exit) ? Deferred.succeed(answer, exit.value) : Deferred.done(answer, exit)
              })
            ),
            Effect.asVoid
          )
        )
        return { _tag: "Answered", answered: yield* Deferred.await(answer) } as const
      })

    return { once }
  })
