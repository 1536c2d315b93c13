import { SqlClient, type SqlError } from "@effect/sql"
import * as Migrator from "@effect/sql/Migrator"
import { Effect, Option } from "effect"

/**
 * The migrations of a record keyed `<id>_<name>` (as `Migrator.fromRecord` reads it), run by `@effect/sql`'s migrator
 * unless the database already holds the last of them. The migrator checks inside a transaction of five statements,
 * which every start of every command would pay for every store; an up-to-date database costs one read. Anything
 * else (no migrations table yet, an older database, one a newer myclaw migrated further) goes to the migrator.
 */
export const migrateRecord = (
  table: string,
  record: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>
) => {
  const loader = Migrator.fromRecord(record)
  const latest = Math.max(...Object.keys(record).map((key) => Number.parseInt(key, 10)))
  return Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      Effect.option(sql<{ readonly id: number | null }>`SELECT max(migration_id) AS id FROM ${sql(table)}`),
      (current): Effect.Effect<
        ReadonlyArray<readonly [id: number, name: string]>,
        Migrator.MigrationError | SqlError.SqlError,
        SqlClient.SqlClient
      > =>
        Option.isSome(current) && current.value[0]?.id === latest
          ? Effect.succeed([])
          : Migrator.make({})({ loader, table })
    ))
}
