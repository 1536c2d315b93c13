import { AuditLogFile } from "./audit/AuditLogFile.js"
import { FilesBaseLayer } from "./Base.js"
import * as Compose from "./Compose.js"
import { IdGeneratorLive } from "./ids/IdGeneratorLive.js"
import { PlanCacheSqlite } from "./plans/PlanCacheSqlite.js"
import { SessionsSqlite } from "./sessions/SessionsSqlite.js"

/**
 * The sessions, the audit log that records their deletion and the plan cache that forgets with them, for the
 * sessions commands.
 */
export const SessionsCommandLayer = Compose.merge(SessionsSqlite, PlanCacheSqlite).pipe(
  Compose.provideMerge(Compose.merge(AuditLogFile, IdGeneratorLive)),
  Compose.provideMerge(FilesBaseLayer)
)
