import * as Reactivity from "@effect/experimental/Reactivity"
import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect } from "effect"
import * as NodePath from "node:path"

/** A client of its own on the SQLite database `file`, as another process opens it; closed with the scope. */
export const clientOn = (file: string) => SqliteClient.make({ filename: file }).pipe(Effect.provide(Reactivity.layer))

/** A fresh SQLite database, `name` in a temporary folder (removed with the scope), and a client on it. */
export const freshDatabase = (name: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const file = NodePath.join(yield* fs.makeTempDirectoryScoped({ prefix: "myclaw-sqlite-" }), name)
    const client = yield* clientOn(file)
    return { file, client }
  })

/**
 * A store made by `make` over a fresh database's client, used once by `use`, and the `PRAGMA synchronous` level
 * its connection is left at: 1 NORMAL (in WAL, nothing synced at commit), 2 FULL (the log synced at every commit).
 */
export const synchronousLevel = <S, E, R, E2, R2>(
  name: string,
  make: (file: string) => Effect.Effect<S, E, R | SqlClient.SqlClient | SqliteClient.SqliteClient>,
  use: (store: S) => Effect.Effect<unknown, E2, R2>
) =>
  Effect.gen(function*() {
    const { client, file } = yield* freshDatabase(name)
    const store = yield* make(file).pipe(
      Effect.provideService(SqlClient.SqlClient, client),
      Effect.provideService(SqliteClient.SqliteClient, client)
    )
    yield* use(store)
    const [row] = yield* client<{ synchronous: number }>`PRAGMA synchronous`
    return row!.synchronous
  }).pipe(Effect.provide(NodeContext.layer))
