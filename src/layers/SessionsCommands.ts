import { AuditLogFile } from "./audit/AuditLogFile.js"
import { FilesBaseLayer } from "./Base.js"
import * as Compose from "./Compose.js"
import { IdGeneratorLive } from "./ids/IdGeneratorLive.js"
import { SessionsSqlite } from "./sessions/SessionsSqlite.js"

/** The sessions and the audit log that records their deletion, for the sessions commands. */
export const SessionsCommandLayer = SessionsSqlite.pipe(
  Compose.provideMerge(Compose.merge(AuditLogFile, IdGeneratorLive)),
  Compose.provideMerge(FilesBaseLayer)
)
