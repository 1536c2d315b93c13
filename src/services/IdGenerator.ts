import { Context, Effect, FiberRef } from "effect"
import type { DrawnId } from "../domain/ExecutionTrace.js"

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

/**
 * The ids one turn drew, in order. Its array is made by the first one, of that one: most turns draw a single id
 * (their trace's), and an array grown from empty takes room for seventeen, which an open turn would hold.
 */
export class DrawnLog {
  private drawn: Array<DrawnId> | undefined = undefined

  push(id: DrawnId): void {
    if (this.drawn === undefined) this.drawn = [id]
    else this.drawn.push(id)
  }

  /** The ids drawn so far, in order (the log's own array: a reader that keeps them copies them). */
  all(): ReadonlyArray<DrawnId> {
    return this.drawn ?? none
  }
}

const none: ReadonlyArray<DrawnId> = Object.freeze([])

/**
 * Where the ids drawn by the current turn go (the turn sets it; fibers it forks share the same log): its trace
 * records them so that a replay draws the same ones.
 */
export const DrawnIds = FiberRef.unsafeMake<DrawnLog | null>(null)

/**
 * The id `make` makes now, logged in the current turn's drawn ids: every IdGenerator hands out its ids through
 * here, each made and logged in one runtime operation.
 */
export const drawId = (kind: IdKind, make: (kind: IdKind) => string): Effect.Effect<string> =>
  Effect.withFiberRuntime((fiber) => {
    const id = make(kind)
    fiber.getFiberRef(DrawnIds)?.push({ kind, id })
    return Effect.succeed(id)
  })
