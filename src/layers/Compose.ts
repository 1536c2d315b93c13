import { Context, Effect, Layer, type Scope } from "effect"
import { dual } from "effect/Function"

/**
 * `Layer.provideMerge`, `Layer.provide`, `Layer.merge` and `Layer.mergeAll`, each one node of the layer graph.
 *
 * Effect builds a graph node by node, and every node pays for its memoization: a scope, a deferred, two refs, a
 * finalizer and the diff of the fiber's references, about a hundred runtime operations. They run once, at
 * start-up, so in the interpreter: a node costs a few hundred microseconds of a command's start. Effect's
 * `provideMerge` makes five nodes (the pair, a suspension, the provision, its own pair and a node that reads the
 * context), `provide` four. These build the same thing in one: the dependency first, then the layer with the
 * dependency's services, in the same fiber, within the node's scope.
 *
 * A part made here is not a node of its own either: it is built in place, in the node that uses it, so that a graph
 * written as compositions of compositions costs a node per layer that makes services, plus its root.
 *
 * Same semantics as Effect's: the layers that make services are memoized by identity (a layer shared across the
 * graph is built once; a composition shared is assembled again from them), the fiber's references changed by the
 * dependency (a logger, a log level) hold while the layer is built and after, and when the layer fails, what the
 * dependency acquired is released with the scope of the nearest node, before the failure reaches anything that
 * could catch it (`Layer.catchAll`, `Layer.orElse` and the like build what they wrap as a node).
 */

/**
 * Builds a layer within the node being built: with the graph's memo map (what is shared is built once), in the
 * node's scope.
 */
type Build = <ROut, E, RIn>(layer: Layer.Layer<ROut, E, RIn>) => Effect.Effect<Context.Context<ROut>, E, RIn>

/** How a layer made here builds its services from its parts. */
type Make<A, E, R> = (build: Build) => Effect.Effect<Context.Context<A>, E, R>

/** The make of each layer made here, under the layer (a `Make` of the layer's own types). */
const makes = new WeakMap<object, unknown>()

/**
 * Builds parts in the node being built. A part made here is built in place, with this node's build (no node of
 * its own: its parts are memoized, it is not); any other layer through the memo map.
 */
const builder = (memoMap: Layer.MemoMap, scope: Scope.Scope): Build => {
  const build: Build = <ROut, E, RIn>(layer: Layer.Layer<ROut, E, RIn>) => {
    const make = makes.get(layer) as Make<ROut, E, RIn> | undefined
    return make === undefined ? Layer.buildWithMemoMap(layer, memoMap, scope) : make(build)
  }
  return build
}

/** One node of the graph, whose services are what `build` makes of its parts. */
const node = <A, E, R>(make: (build: Build) => Effect.Effect<Context.Context<A>, E, R>) => {
  const layer = Layer.scopedContext(
    Effect.flatMap(
      Layer.CurrentMemoMap,
      (memoMap) => Effect.flatMap(Effect.scope, (scope) => make(builder(memoMap, scope)))
    )
  )
  makes.set(layer, make)
  return layer
}

/** The dependency built first, then the layer with the dependency's services: both contexts. */
const over = <ROut, E, RIn, ROut2, E2, RIn2>(
  build: Build,
  layer: Layer.Layer<ROut, E, RIn>,
  dependency: Layer.Layer<ROut2, E2, RIn2>
) =>
  Effect.flatMap(
    build(dependency),
    (provided) => Effect.map(Effect.provide(build(layer), provided), (built) => [provided, built] as const)
  )

/** `layer` over `dependency`: both layers' services (the layer's where both provide one). */
export const provideMerge: {
  <ROut2, E2, RIn2>(
    dependency: Layer.Layer<ROut2, E2, RIn2>
  ): <ROut, E, RIn>(layer: Layer.Layer<ROut, E, RIn>) => Layer.Layer<ROut | ROut2, E | E2, RIn2 | Exclude<RIn, ROut2>>
  <ROut, E, RIn, ROut2, E2, RIn2>(
    layer: Layer.Layer<ROut, E, RIn>,
    dependency: Layer.Layer<ROut2, E2, RIn2>
  ): Layer.Layer<ROut | ROut2, E | E2, RIn2 | Exclude<RIn, ROut2>>
} = dual(
  2,
  <ROut, E, RIn, ROut2, E2, RIn2>(layer: Layer.Layer<ROut, E, RIn>, dependency: Layer.Layer<ROut2, E2, RIn2>) =>
    node((build) => Effect.map(over(build, layer, dependency), ([provided, built]) => Context.merge(provided, built)))
)

/** `layer` over `dependency`: the layer's services only. */
export const provide: {
  <ROut2, E2, RIn2>(
    dependency: Layer.Layer<ROut2, E2, RIn2>
  ): <ROut, E, RIn>(layer: Layer.Layer<ROut, E, RIn>) => Layer.Layer<ROut, E | E2, RIn2 | Exclude<RIn, ROut2>>
  <ROut, E, RIn, ROut2, E2, RIn2>(
    layer: Layer.Layer<ROut, E, RIn>,
    dependency: Layer.Layer<ROut2, E2, RIn2>
  ): Layer.Layer<ROut, E | E2, RIn2 | Exclude<RIn, ROut2>>
} = dual(
  2,
  <ROut, E, RIn, ROut2, E2, RIn2>(layer: Layer.Layer<ROut, E, RIn>, dependency: Layer.Layer<ROut2, E2, RIn2>) =>
    node((build) => Effect.map(over(build, layer, dependency), ([, built]) => built))
)

/** What `mergeAll` builds from `Layers`: every layer's services, errors and requirements. */
type Merged<Layers extends ReadonlyArray<Layer.Layer<never, unknown, unknown>>> = Layer.Layer<
  { [K in keyof Layers]: Layer.Layer.Success<Layers[K]> }[number],
  { [K in keyof Layers]: Layer.Layer.Error<Layers[K]> }[number],
  { [K in keyof Layers]: Layer.Layer.Context<Layers[K]> }[number]
>

/**
 * The services of all `layers`, built one after the other in one node (Effect's `Layer.mergeAll` builds them
 * concurrently, a fiber and a scope each, besides a node each). Each layer sees the fiber's references as the
 * previous ones left them; the first to fail stops the build, and what the others acquired is released.
 */
export const mergeAll = <
  Layers extends readonly [Layer.Layer<never, unknown, unknown>, ...Array<Layer.Layer<never, unknown, unknown>>]
>(...layers: Layers): Merged<Layers> => {
  // The contexts are merged as built; their union is what the type above names.
  const built: Layer.Layer<unknown, unknown, unknown> = node((build) =>
    Effect.reduce(
      layers,
      Context.empty() as Context.Context<unknown>,
      (merged, layer) => Effect.map(build(layer), (context) => Context.merge(merged, context))
    )
  )
  return built as Merged<Layers>
}

/** `mergeAll` of two layers. */
export const merge: {
  <ROut2, E2, RIn2>(
    that: Layer.Layer<ROut2, E2, RIn2>
  ): <ROut, E, RIn>(self: Layer.Layer<ROut, E, RIn>) => Layer.Layer<ROut | ROut2, E | E2, RIn | RIn2>
  <ROut, E, RIn, ROut2, E2, RIn2>(
    self: Layer.Layer<ROut, E, RIn>,
    that: Layer.Layer<ROut2, E2, RIn2>
  ): Layer.Layer<ROut | ROut2, E | E2, RIn | RIn2>
} = dual(
  2,
  <ROut, E, RIn, ROut2, E2, RIn2>(self: Layer.Layer<ROut, E, RIn>, that: Layer.Layer<ROut2, E2, RIn2>) =>
    mergeAll(self, that)
)
