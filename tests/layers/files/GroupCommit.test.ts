import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { makeGroupCommit } from "../../../src/layers/files/GroupCommit.js"

describe("group commit", () => {
  it.effect("writes the jobs queued before the close, and refuses those offered after", () =>
    Effect.gen(function*() {
      const written: Array<number> = []
      const scope = yield* Scope.make()
      const commit = yield* Scope.extend(
        makeGroupCommit<number>({ step: (jobs) => Effect.sync(() => written.push(...jobs)) }),
        scope
      )
      for (let i = 0; i < 5; i++) yield* commit.offer(i)
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(written, [0, 1, 2, 3, 4])
      assert.isFalse(yield* commit.offer(5))
    }))
})
