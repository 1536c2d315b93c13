import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, FiberRef, Layer, Logger, LogLevel, Scope } from "effect"
import * as Compose from "../../src/layers/Compose.js"

class Log extends Context.Tag("test/Log")<Log, Array<string>>() {}
class A extends Context.Tag("test/A")<A, string>() {}
class B extends Context.Tag("test/B")<B, string>() {}
class C extends Context.Tag("test/C")<C, string>() {}
class Level extends Context.Tag("test/Level")<Level, LogLevel.LogLevel>() {}

/** A layer providing `tag` with `value`, logging its acquisition (with what `given` reads) and its release. */
const resource = <I, S extends string, R>(tag: Context.Tag<I, S>, value: S, given: Effect.Effect<string, never, R>) =>
  Layer.scoped(
    tag,
    Effect.gen(function*() {
      const log = yield* Log
      log.push(`acquire ${value}${yield* given}`)
      yield* Effect.addFinalizer(() => Effect.sync(() => log.push(`release ${value}`)))
      return value
    })
  )

const alone = Effect.succeed("")
const usingA = Effect.map(A, (a) => `(${a})`)

const failing = Layer.effect(
  C,
  Effect.flatMap(Log, (log) => {
    log.push("fail C")
    return Effect.fail("C failed" as const)
  })
)

/** What Effect's memo map does for each layer a build asks it for. */
interface Memoizing {
  readonly getOrElseMemoize: (layer: unknown, scope: Scope.Scope) => Effect.Effect<unknown, unknown, unknown>
}

/** Builds `layer` over a fresh log in its own scope, then closes the scope: the log and the build's exit. */
const buildAndClose = <ROut, E>(layer: Layer.Layer<ROut, E, Log>) =>
  Effect.gen(function*() {
    const log: Array<string> = []
    const scope = yield* Scope.make()
    const exit = yield* Layer.buildWithScope(layer, scope).pipe(Effect.provideService(Log, log), Effect.exit)
    yield* Scope.close(scope, Exit.void)
    return { log, exit }
  })

describe("Compose", () => {
  it.effect("provideMerge builds the dependency first, gives it to the layer and provides both", () =>
    Effect.gen(function*() {
      const layer = resource(B, "b", usingA).pipe(Compose.provideMerge(resource(A, "a", alone)))
      const { exit, log } = yield* buildAndClose(layer)
      assert.isTrue(Exit.isSuccess(exit))
      if (Exit.isSuccess(exit)) {
        assert.strictEqual(Context.get(exit.value, A), "a")
        assert.strictEqual(Context.get(exit.value, B), "b")
      }
      // Released in the reverse order of acquisition, when the scope closes.
      assert.deepStrictEqual(log, ["acquire a", "acquire b(a)", "release b", "release a"])
    }))

  it.effect("provide keeps the dependency's services out of what the layer provides", () =>
    Effect.gen(function*() {
      const { exit } = yield* buildAndClose(Compose.provide(resource(B, "b", usingA), resource(A, "a", alone)))
      assert.isTrue(Exit.isSuccess(exit))
      if (Exit.isSuccess(exit)) {
        assert.strictEqual(Context.get(exit.value, B), "b")
        assert.isFalse(Context.getOption(exit.value, A)._tag === "Some")
      }
    }))

  it.effect("a dependency shared by two parts of the graph is built once", () =>
    Effect.gen(function*() {
      const shared = resource(A, "a", alone)
      const layer = Compose.mergeAll(
        Compose.provide(resource(B, "b", usingA), shared),
        Compose.provide(resource(C, "c", usingA), shared)
      )
      const { exit, log } = yield* buildAndClose(layer)
      assert.isTrue(Exit.isSuccess(exit))
      assert.deepStrictEqual(log.filter((line) => line.startsWith("acquire")), [
        "acquire a",
        "acquire b(a)",
        "acquire c(a)"
      ])
      assert.deepStrictEqual(log.filter((line) => line === "release a"), ["release a"])
    }))

  it.effect("a layer that fails releases what its dependency acquired and fails the build", () =>
    Effect.gen(function*() {
      const { exit, log } = yield* buildAndClose(failing.pipe(Compose.provideMerge(resource(A, "a", alone))))
      assert.deepStrictEqual(exit, Exit.fail("C failed" as const))
      assert.deepStrictEqual(log, ["acquire a", "fail C", "release a"])
    }))

  it.effect("mergeAll builds its layers in order, and stops at the first that fails, releasing the others", () =>
    Effect.gen(function*() {
      const built = yield* buildAndClose(Compose.mergeAll(resource(A, "a", alone), resource(B, "b", alone)))
      assert.deepStrictEqual(built.log, ["acquire a", "acquire b", "release b", "release a"])
      const failed = yield* buildAndClose(Compose.mergeAll(resource(A, "a", alone), failing, resource(B, "b", alone)))
      assert.deepStrictEqual(failed.exit, Exit.fail("C failed" as const))
      assert.deepStrictEqual(failed.log, ["acquire a", "fail C", "release a"])
    }))

  it.effect("a composition within a composition is built in its parent's node: only the other layers are memoized", () =>
    Effect.gen(function*() {
      // Effect's memo map memoizes a layer in `getOrElseMemoize` (its public type names no method): counted here.
      const memoMap = (yield* Layer.makeMemoMap) as Layer.MemoMap & Memoizing
      const asked: Array<unknown> = []
      const counting: Layer.MemoMap & Memoizing = {
        [Layer.MemoMapTypeId]: Layer.MemoMapTypeId,
        getOrElseMemoize: (layer, scope) => {
          asked.push(layer)
          return memoMap.getOrElseMemoize(layer, scope)
        }
      }
      const a = resource(A, "a", alone)
      const b = resource(B, "b", usingA)
      const c = resource(C, "c", alone)
      const root = Compose.mergeAll(Compose.provideMerge(b, a), Compose.merge(c, Compose.provide(c, a)))
      const log: Array<string> = []
      const context = yield* Effect.scoped(
        Effect.flatMap(Effect.scope, (scope) => Layer.buildWithMemoMap(root, counting, scope))
      ).pipe(Effect.provideService(Log, log))
      assert.strictEqual(Context.get(context, B), "b")
      const names = new Map<unknown, string>([[root, "root"], [a, "a"], [b, "b"], [c, "c"]])
      assert.deepStrictEqual(asked.map((layer) => names.get(layer) ?? "a composition"), [
        "root",
        "a",
        "b",
        "c",
        "a",
        "c"
      ])
      assert.deepStrictEqual(log.filter((line) => line.startsWith("acquire")), [
        "acquire a",
        "acquire b(a)",
        "acquire c"
      ])
    }))

  it.effect("a composition that fails within a composition releases what it acquired before the failure is caught", () =>
    Effect.gen(function*() {
      const fallback = Layer.effectDiscard(Effect.flatMap(Log, (log) => Effect.sync(() => log.push("fallback"))))
      const inner = Compose.mergeAll(resource(B, "b", alone), failing)
      const layer = Compose.mergeAll(resource(A, "a", alone), inner).pipe(Layer.catchAll(() => fallback))
      const { exit, log } = yield* buildAndClose(layer)
      assert.isTrue(Exit.isSuccess(exit))
      assert.deepStrictEqual(log, ["acquire a", "acquire b", "fail C", "release b", "release a", "fallback"])
    }))

  it.effect("the fiber references a dependency sets hold while the layer is built, and after", () =>
    Effect.gen(function*() {
      const level = Layer.effect(Level, FiberRef.get(FiberRef.currentMinimumLogLevel))
      const layer = level.pipe(Compose.provideMerge(Logger.minimumLogLevel(LogLevel.Debug)))
      const [seenWhileBuilding, seenAfter] = yield* Effect.all([
        Level,
        FiberRef.get(FiberRef.currentMinimumLogLevel)
      ]).pipe(Effect.provide(layer))
      assert.strictEqual(seenWhileBuilding, LogLevel.Debug)
      assert.strictEqual(seenAfter, LogLevel.Debug)
      const merged = yield* FiberRef.get(FiberRef.currentMinimumLogLevel).pipe(
        Effect.provide(Compose.merge(Logger.minimumLogLevel(LogLevel.Error), Layer.empty))
      )
      assert.strictEqual(merged, LogLevel.Error)
    }))
})
