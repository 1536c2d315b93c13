import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, FiberId } from "effect"
import { failureOf } from "../../src/programs/Failure.js"

const boom = new Error("boom")
const causes: ReadonlyArray<readonly [string, Cause.Cause<string>]> = [
  ["a failure", Cause.fail("no")],
  ["a defect", Cause.die(boom)],
  ["an interruption", Cause.interrupt(FiberId.make(1, 0))],
  ["nothing", Cause.empty],
  ["a failure then a defect", Cause.sequential(Cause.fail("no"), Cause.die(boom))],
  ["a defect beside a failure", Cause.parallel(Cause.die(boom), Cause.fail("no"))],
  ["two failures", Cause.parallel(Cause.fail("first"), Cause.fail("second"))],
  ["an interruption then a failure", Cause.sequential(Cause.interrupt(FiberId.make(1, 0)), Cause.fail("late"))],
  [
    "a failure inside an interrupted defect",
    Cause.parallel(Cause.interrupt(FiberId.make(2, 0)), Cause.sequential(Cause.fail("x"), Cause.die(boom)))
  ]
]

describe("failureOf", () => {
  for (const [name, cause] of causes) {
    it.effect(`hands on ${name} as matchEffect does`, () =>
      Effect.gen(function*() {
        const failing = Effect.failCause(cause)
        const byMatchEffect = yield* Effect.exit(Effect.matchEffect(failing, {
          onFailure: (error) => Effect.succeed(`handled ${error}`),
          onSuccess: () => Effect.succeed("succeeded")
        }))
        const byFailureOf = yield* Effect.exit(Effect.matchCauseEffect(failing, {
          onFailure: (c) => {
            const failure = failureOf(c)
            return failure._tag === "Expected"
              ? Effect.succeed(`handled ${failure.error}`)
              : Effect.failCause(failure.cause)
          },
          onSuccess: () => Effect.succeed("succeeded")
        }))
        // The same outcome, and a failure of the same structure (each failure, defect and interruption in place).
        assert.deepStrictEqual(byFailureOf.toJSON(), byMatchEffect.toJSON())
        if (Exit.isFailure(byFailureOf) && Exit.isFailure(byMatchEffect)) {
          assert.strictEqual(Cause.pretty(byFailureOf.cause), Cause.pretty(byMatchEffect.cause))
        }
      }))
  }
})
