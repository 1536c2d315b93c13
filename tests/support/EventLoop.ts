import { Effect } from "effect"

/**
 * Lets the event loop turn until `done` holds, at most `turns` times: for work that completes on Node's I/O
 * threads or on later turns of the loop, which a loaded machine runs late. No clock is read; a check that holds
 * at once costs one turn.
 */
export const turnsUntil = (done: Effect.Effect<boolean>, turns: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < turns && !(yield* done); i++) {
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
    }
  })
