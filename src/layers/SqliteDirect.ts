import { SqlClient, type SqlError, Statement } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Option } from "effect"
import { isExporting } from "../programs/Spans.js"

/**
 * The statements a store runs on every turn, on its SQLite client's connection itself. Through the client, each
 * statement is also a span (made even when no tracer exports it), a scope, the connection's permit taken and
 * given back, and its text compiled: about 90 runtime operations, where the connection's own `execute` (its
 * cache of prepared statements, then the statement) is about 15. The text and parameters are the statement's own
 * (`compile`), the rows the same.
 *
 * What the client's permit guarantees is kept: a statement run here never runs inside a transaction of the
 * client, nor a transaction while one of these is under way. Every transaction on the client must go through
 * `exclusive`: until it ends, statements go through the client (and so wait for its permit, held by the
 * transaction), and it begins only once the statements already started here have ended. When a tracer exports
 * spans, statements go through the client too, with their spans; so they do under a statement transformer
 * (`Statement.withTransformer`), which sees them.
 *
 * Valid for `@effect/sql-sqlite-node`'s client only: it has one connection for as long as it is open, the one
 * `reserve` gives.
 */
export interface SqliteDirect {
  readonly run: <A extends object>(
    statement: Statement.Statement<A>
  ) => Effect.Effect<ReadonlyArray<A>, SqlError.SqlError>
  readonly exclusive: <A, E, R>(transaction: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

export const makeSqliteDirect: Effect.Effect<
  SqliteDirect,
  SqlError.SqlError,
  SqlClient.SqlClient | SqliteClient.SqliteClient
> = Effect.gen(function*() {
  // Required so that only that client's connection is ever held past `reserve`'s scope.
  yield* SqliteClient.SqliteClient
  const sql = yield* SqlClient.SqlClient
  const connection = yield* Effect.scoped(sql.reserve)
  let exclusives = 0
  let running = 0
  const ended = Effect.sync(() => {
    running--
  })

  const run = <A extends object>(
    statement: Statement.Statement<A>
  ): Effect.Effect<ReadonlyArray<A>, SqlError.SqlError> =>
    Effect.withFiberRuntime((fiber) => {
      if (
        exclusives > 0 || isExporting(fiber.currentTracer) ||
        Option.isSome(fiber.getFiberRef(Statement.currentTransformer))
      ) return statement
      const [text, params] = statement.compile()
      running++
      return Effect.ensuring(
        connection.execute(text, params, undefined) as Effect.Effect<ReadonlyArray<A>, SqlError.SqlError>,
        ended
      )
    })

  // A statement started here has run to its end unless its fiber yielded half-way (the runtime lets other fibers
  // run every few thousand operations): the transaction waits for it.
  const settled: Effect.Effect<void> = Effect.suspend(() =>
    running === 0 ? Effect.void : Effect.zipRight(Effect.yieldNow(), settled)
  )
  const left = Effect.sync(() => {
    exclusives--
  })
  // Counted and uncounted in one region: an interruption cannot leave it counted.
  const exclusive = <A, E, R>(transaction: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.uninterruptibleMask((restore) => {
      exclusives++
      return Effect.ensuring(restore(Effect.zipRight(settled, transaction)), left)
    })

  return { run, exclusive }
})
